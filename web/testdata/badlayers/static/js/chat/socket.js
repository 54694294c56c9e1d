// Imports a file that is not there.
import { gone } from "./gone.js";

export const send = () => gone;
