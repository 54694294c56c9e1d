// The cards test page may not load the chat.
import { send } from "../static/js/chat/socket.js";

send();
