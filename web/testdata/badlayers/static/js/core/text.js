// Goes up a layer, and in a circle with the renderer.
import { draw } from "../renderers/draw.js";

export const words = () => draw;
