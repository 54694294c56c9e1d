// Package dsn opens the store a data source name names, the same way for
// every program: kindserver's -store flag and a library user's main alike.
//
//	memory                          memstore, in this process only
//	sqlite:PATH                     SQLite, in one file
//	postgres://… or postgresql://…  PostgreSQL, shared between processes
package dsn
