// Package webhook sends an ask's events to HTTP endpoints, signed as
// Standard Webhooks (standardwebhooks.com): ask.parked when a turn waits
// for a person, ask.resolved when that wait ends, however it ends.
//
// Events come from the store's outbox (store.Outbox), written in the same
// transaction as the park or its end, so none is lost to a crash: the
// Sender delivers them at least once, each with the same webhook-id on
// every attempt, with exponential backoff (a Retry-After header honoured),
// in order per ask (an ask's ask.resolved never before its ask.parked),
// and across processes sharing a PostgreSQL store without sending one
// event twice while they run (each delivery holds a lease on its event).
// An endpoint that answers 410 Gone is disabled.
//
//	keys, err := webhook.ParseKeys(os.Getenv("KINDKIT_WEBHOOK_SECRET"))
//	hooks, err := webhook.New(webhook.Config{Endpoints: []webhook.Endpoint{{URL: u, Keys: keys}}})
//	eng, err := agent.NewEngine(agent.Config{…, Outbox: hooks.Consumers()})
//	err = hooks.Start(eng)
//	defer hooks.Stop()
//
// A body holds what an ask is and how it ended, never the conversation's
// messages, the model's words or an answer's values; docs/webhooks.md
// shows it, and a receiver.
package webhook
