// Goes up to the chat, which only the chat may import.
import { send } from "../chat/socket.js";
import { words } from "../core/text.js";

export const draw = () => [words, send];
