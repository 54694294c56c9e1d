// Package store is kindkit's chat data model and the contract of its
// stores: conversations, sessions, the message history, parks (a turn
// waiting for a person, stored as data), and the outbox of ask events
// (Outbox) that a park's own write fills when webhooks are on. Its
// implementations are store/memstore (in memory), store/sqlstore (SQLite
// and PostgreSQL), and store/storetest is the conformance suite all of
// them pass.
package store
