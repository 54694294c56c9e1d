// Package demo is kindserver's built-in model: with no flags, a newcomer
// sees the whole flow of a choices card (raise, park, submit, resume)
// without a real model. It names the choices kind; the engine names none.
package demo
