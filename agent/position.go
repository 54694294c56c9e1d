package agent

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Position is an event's place in its conversation's stream: durable,
// ordered, and the same in every process, so that a subscriber that
// passes the last one it saw to Subscribe misses nothing and is told
// nothing twice. Its String is opaque to transports (SSE's id and
// Last-Event-ID carry it); the zero Position is none.
//
// It is built on the store's history: the Seq of the conversation's last
// stored message (store.Message.Seq), and how far the stream went since,
// in bytes of streamed text and events told. A message's own event (the
// person's message, a tool result, the reply, a failure) is at offset 0
// of its message; a turn's text, while it streams, is at the bytes said
// since the last stored message, the text stored with the step that ends
// it (Subscribe tells it again from the store, as far as it was not told).
type Position struct {
	seq int64 // the Seq of the last stored message
	off int64 // bytes of text and events since it
}

// endOfSegment is the offset of a cancelled event: nothing of its turn
// comes after it before the next stored message (the turn's record of
// its end).
const endOfSegment = 1 << 62

// IsZero tells whether p is no position.
func (p Position) IsZero() bool { return p == Position{} }

// String is p as transports carry it, "" for none.
func (p Position) String() string {
	if p.IsZero() {
		return ""
	}
	return strconv.FormatInt(p.seq, 10) + "." + strconv.FormatInt(p.off, 10)
}

// after tells whether p comes after q.
func (p Position) after(q Position) bool {
	return p.seq > q.seq || p.seq == q.seq && p.off > q.off
}

// ErrBadPosition is ParsePosition's error for a string no Position
// makes.
var ErrBadPosition = errors.New("agent: not a stream position")

// ParsePosition reads a Position from its String; "" is none. Anything
// else, and any string a Position does not print as, is ErrBadPosition.
func ParsePosition(s string) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	seq, off, ok := strings.Cut(s, ".")
	if !ok || len(s) > 40 {
		return Position{}, ErrBadPosition
	}
	p := Position{}
	var err1, err2 error
	p.seq, err1 = strconv.ParseInt(seq, 10, 64)
	p.off, err2 = strconv.ParseInt(off, 10, 64)
	if err1 != nil || err2 != nil || p.seq < 0 || p.off < 0 || p.off > endOfSegment || p.String() != s {
		return Position{}, ErrBadPosition
	}
	return p, nil
}

// trimmed is ev as a subscriber that saw the stream up to from is told
// it: not at all when it comes before, and a run of text without the
// bytes it was told already.
func trimmed(ev Event, from Position) (Event, bool) {
	if !ev.Pos.after(from) {
		return ev, false
	}
	if ev.Kind == EventText && ev.Pos.seq == from.seq {
		start := ev.Pos.off - int64(len(ev.Text))
		if skip := from.off - start; skip > 0 {
			ev.Text = ev.Text[skip:]
		}
	}
	return ev, true
}

// replayPage is how many messages a replay reads at a time.
const replayPage = 256

// replay is what the store holds of conversation conv's stream after
// position from, as events with their positions: the events of the
// stored messages (a message's own, and the text, tool calls and prompts
// told before it), then the card that waits, if one does. What the store
// does not keep is not told: the text of a step still streaming (the live
// stream tells it), a Stop of a card held by no process here told again
// at most once more, a host tool's Asks, and a reply's usage and
// citations. A turn's events carry its request id when one of its cards
// is in the store.
func (e *Engine) replay(ctx context.Context, conv string, from Position) ([]Event, error) {
	start, err := e.turnStart(ctx, conv, from)
	if err != nil {
		return nil, err
	}
	var msgs []*store.Message
	for after := start; ; {
		page, err := e.cfg.Store.MessagesAfter(ctx, conv, after, replayPage)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, page...)
		if len(page) < replayPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	// The cards of the calls in msgs, by call id.
	parks := map[string]*store.Park{}
	if len(msgs) > 0 {
		// An hour of leeway for the clocks of the processes that wrote them.
		ended, err := e.cfg.Store.EndedParks(ctx, conv, msgs[0].CreatedAt.Add(-time.Hour), "", 1000)
		if err != nil {
			return nil, err
		}
		for _, p := range ended {
			parks[p.ToolCall.ID] = p
		}
	}
	pending, err := e.cfg.Store.PendingPark(ctx, conv)
	switch {
	case err == nil:
		parks[pending.ToolCall.ID] = pending
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	r := replayer{from: from, parks: parks, calls: map[string]store.ToolCall{}, shown: map[string]bool{}}
	r.requestIDs(msgs)
	for i, m := range msgs {
		r.message(i, m)
	}
	if pending != nil {
		r.prompts(len(msgs))
	}
	return r.out, nil
}

// turnStart is the seq after which the replay from position from reads:
// before the person's message that started the turn at from, so that the
// turn's events are told with its request id and the card it resumed from.
func (e *Engine) turnStart(ctx context.Context, conv string, from Position) (int64, error) {
	at, err := e.cfg.Store.MessagesAfter(ctx, conv, max(from.seq-1, 0), 1)
	if err != nil || len(at) == 0 || at[0].Role == store.RoleUser {
		return max(from.seq-1, 0), err
	}
	users, _, err := e.cfg.Store.Messages(ctx, conv, []store.Role{store.RoleUser}, at[0].ID, 1)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return max(from.seq-1, 0), nil
	case err != nil:
		return 0, err
	case len(users) == 0:
		return 0, nil
	}
	return users[0].Seq - 1, nil
}

// replayer turns stored messages into the events they were told as.
type replayer struct {
	from  Position
	parks map[string]*store.Park    // by call id
	calls map[string]store.ToolCall // the calls of the assistant messages read, by id
	order []string                  // their ids, in order
	shown map[string]bool           // calls whose card or chunk was told
	out   []Event

	seg   Position // the stream's position: the last message read, and the offset since
	reqs  []string // each message's turn's request id (requestIDs)
	after string   // the park the turn's run resumed from
}

// requestIDs finds the request id of each message's turn, from the turn's
// cards: a turn runs from a person's message to the next.
func (r *replayer) requestIDs(msgs []*store.Message) {
	r.reqs = make([]string, len(msgs))
	start := 0
	id := ""
	flush := func(end int) {
		for i := start; i < end; i++ {
			r.reqs[i] = id
		}
	}
	for i, m := range msgs {
		if m.Role == store.RoleUser {
			flush(i)
			start, id = i, ""
		}
		for _, c := range m.ToolCalls {
			if p := r.parks[c.ID]; p != nil && id == "" {
				if s, err := stateOf(p); err == nil {
					id = s.RequestID
				}
			}
		}
	}
	flush(len(msgs))
}

func (r *replayer) tell(i int, ev Event) {
	if len(r.reqs) > 0 {
		ev.RequestID = r.reqs[min(i, len(r.reqs)-1)]
	}
	if ev.After == "" && ev.Kind != EventMessage {
		ev.After = r.after
	}
	if ev, ok := trimmed(ev, r.from); ok {
		r.out = append(r.out, ev)
	}
}

// next tells an event told between stored messages.
func (r *replayer) next(i int, ev Event) {
	r.seg.off++
	ev.Pos = r.seg
	r.tell(i, ev)
}

// stored moves the stream past message m, whose own event (if any) is at
// its offset 0.
func (r *replayer) stored(m *store.Message) { r.seg = Position{seq: m.Seq} }

// prompts tells the cards of the calls read whose prompt was not told
// yet: a card that waits, or that a Stop ended. Message i comes next.
func (r *replayer) prompts(i int) {
	for _, id := range r.order {
		if p := r.parks[id]; p != nil && !r.shown[id] {
			r.prompt(i, p)
		}
	}
}

// prompt tells park p's prompt and its call's chunk, as the turn did
// when it parked.
func (r *replayer) prompt(i int, p *store.Park) {
	shown := *p
	shown.State, shown.Outcome, shown.Record, shown.Turn = store.ParkPending, nil, nil, nil
	shown.Owed, shown.LeaseOwner, shown.LeaseUntil = false, "", time.Time{}
	r.next(i, Event{Kind: EventPrompt, Park: &shown})
	r.next(i, Event{Kind: EventToolCall, Call: p.ToolCall})
	r.shown[p.ToolCall.ID] = true
}

func (r *replayer) message(i int, m *store.Message) {
	switch m.Role {
	case store.RoleUser:
		r.prompts(i)
		r.after, r.order = "", r.order[:0]
		r.stored(m)
		r.tell(i, Event{Kind: EventMessage, Message: m, Pos: r.seg})
	case store.RoleAssistant:
		if m.Text != "" {
			r.seg.off += int64(len(m.Text))
			r.tell(i, Event{Kind: EventText, Text: m.Text, Pos: r.seg})
		}
		for _, c := range m.ToolCalls {
			r.calls[c.ID] = c
			r.order = append(r.order, c.ID)
		}
		r.stored(m)
	case store.RoleTool:
		call, ok := r.calls[m.ToolCallID]
		if !ok {
			call = store.ToolCall{ID: m.ToolCallID, Name: m.ToolName}
		}
		p := r.parks[m.ToolCallID]
		switch {
		case p != nil && !r.shown[call.ID]:
			r.prompt(i, p)
		case !r.shown[call.ID]:
			r.next(i, Event{Kind: EventToolCall, Call: call})
			r.shown[call.ID] = true
		}
		if p != nil && p.State == store.ParkCancelled {
			// Withdrawn by a message: its turn was told cancelled.
			r.tell(i, Event{Kind: EventCancelled, After: p.ID, Pos: Position{seq: r.seg.seq, off: endOfSegment}})
			r.stored(m)
			return
		}
		if p != nil {
			r.after = p.ID
		}
		r.stored(m)
		r.tell(i, Event{Kind: EventToolResult, Call: call, Text: m.Text, IsError: m.IsError, Pos: r.seg})
	case store.RoleReply:
		r.stored(m)
		r.tell(i, Event{Kind: EventReply, Reply: &Reply{MessageID: m.ID, Text: m.Text}, Pos: r.seg})
	case store.RoleEnded:
		r.prompts(i)
		if m.IsError {
			r.stored(m)
			r.tell(i, Event{Kind: EventFailed, Pos: r.seg})
			return
		}
		ev := Event{Kind: EventCancelled, Pos: Position{seq: r.seg.seq, off: endOfSegment}}
		if n := len(r.order); n > 0 && r.parks[r.order[n-1]] != nil && r.parks[r.order[n-1]].State == store.ParkCancelled {
			ev.After = r.parks[r.order[n-1]].ID // a card's turn, stopped while it waited
		}
		r.tell(i, ev)
		r.stored(m)
	default:
		r.stored(m)
	}
}

// Equal tells whether p and q are the same position.
func (p Position) Equal(q Position) bool { return p == q }
