// Breaks answer-page-draws-cards-only: the answer page imports the chat.
import "./js/chat/socket.js";
