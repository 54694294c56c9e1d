// Package store is kindkit's chat data model and the contract of its
// stores: conversations, sessions, the message history, and parks (a turn
// waiting for a person, stored as data). Its implementations are
// store/memstore (in memory), store/sqlstore (SQLite and PostgreSQL), and
// store/storetest is the conformance suite all of them pass.
package store
