package agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/stack"
	"github.com/kindkit/kindkit/store"
)

// A run is one POST: a RunAgentInput in, its events out, on the request's
// goroutine. It starts a turn (a new message) or resumes one (a resume),
// then follows the turn's events until it parks (the interrupt outcome),
// replies (success), is cancelled, or fails (RUN_ERROR).
type run struct {
	h      *Handler
	ctx    context.Context
	w      http.ResponseWriter
	rc     *http.ResponseController
	in     *Input
	thread thread

	text    string          // the text message open now, "" when none
	emitted map[string]bool // the tool calls this run has streamed
	broken  bool            // a write failed: the client is gone
}

// RUN_ERROR codes. AG-UI defines none; these say what a client may do.
const (
	codeInvalidInput   = "invalid_input"        // the input cannot run: fix it
	codeInterruptOpen  = "interrupt_open"       // resume the open interrupt (metadata.interrupts) first
	codeResumeUnknown  = "resume_unknown"       // a resume names no interrupt of this thread
	codeResumeInvalid  = "resume_invalid"       // the payload breaks its responseSchema (metadata.errors); the interrupt stays open
	codeExpired        = "interrupt_expired"    // the interrupt's expiresAt passed
	codeEnded          = "interrupt_ended"      // the interrupt was answered otherwise, withdrawn or stopped
	codeTurnInProgress = "turn_in_progress"     // a turn of the thread runs: wait for it
	codeTurnFailed     = "turn_failed"          // the turn failed (the server's log says why)
	codeLagging        = "lagging"              // the stream fell behind; the turn goes on, run again
	codeDraining       = "server_draining"      // the server is going away; the turn goes on, run again
	codeInternal       = "internal_error"       // the server's log says why
	codeNotHosted      = "interrupt_not_hosted" // the interrupt's kind is not hosted by this server
)

// eventBuffer bounds the engine's events a run holds while it writes; a
// client that reads slower than the turn speaks is cut off (lagging).
const eventBuffer = 4096

func (r *run) serve() {
	r.send(runStarted{Type: "RUN_STARTED", Timestamp: r.now(), ThreadID: r.in.ThreadID, RunID: r.in.RunID, ProtocolVersion: protocolVersion})
	pending, err := r.pending()
	if err != nil {
		r.internal("load the open interrupt", err)
		return
	}
	text, ok, err := r.newMessage()
	if err != nil {
		r.internal("look up the input's last message", err)
		return
	}
	if len(r.in.Resume) > 0 {
		if ok {
			r.fail(codeInvalidInput, "a run either resumes interrupts or sends a message: send the message in a run of its own", nil)
			return
		}
		r.resume(pending)
		return
	}
	switch {
	case pending != nil:
		r.fail(codeInterruptOpen, "the thread waits on an interrupt: a run must resume it before it sends anything",
			map[string]any{"interrupts": []interrupt{r.h.interruptOf(pending)}})
	case !ok:
		r.finishAsStored() // nothing new: the thread as it is
	case text == "":
		r.fail(codeInvalidInput, "the new user message has no text", nil)
	default:
		r.sendMessage(text)
	}
}

// pending is the thread's open interrupt, nil when none.
func (r *run) pending() (*store.Park, error) {
	return r.h.eng.PendingAsk(r.ctx, r.thread.conv.ID)
}

// newMessage is the text of the input's new user message: its last
// message, when that is a user's the thread has not stored (the client
// sends the whole conversation, and kindkit keeps its own copy). ok is
// false when there is none.
func (r *run) newMessage() (text string, ok bool, err error) {
	msgs := r.in.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
		return "", false, nil
	}
	last := msgs[len(msgs)-1]
	// Messages reads older than a message of the conversation, and
	// ErrNotFound says the id is none of its messages.
	_, _, err = r.h.store.Messages(r.ctx, r.thread.conv.ID, []store.Role{store.RoleUser}, last.ID, 1)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return last.Text, true, nil
	case err != nil:
		return "", false, err
	}
	return "", false, nil
}

// sendMessage starts a turn with text and follows it.
func (r *run) sendMessage(text string) {
	events, stop := r.subscribe()
	defer stop()
	requestID := uuid.NewString() // names the turn on its events; no key: v4
	err := r.h.eng.Send(r.ctx, r.thread.sess, agent.Message{RequestID: requestID, Text: text}, nil)
	if errors.Is(err, agent.ErrTurnInProgress) {
		// A turn runs (here or in another process), or it parked since
		// this run looked: the engine stored nothing.
		if p, _ := r.pending(); p != nil {
			r.fail(codeInterruptOpen, "the thread waits on an interrupt: a run must resume it before it sends anything",
				map[string]any{"interrupts": []interrupt{r.h.interruptOf(p)}})
			return
		}
		r.fail(codeTurnInProgress, "a turn of this thread is running: run again when it has finished", nil)
		return
	}
	if err != nil {
		r.internal("send the message", err)
		return
	}
	r.follow(events, requestID, "")
}

// resume answers the open interrupt p (nil when none) with the input's
// resume entries. Every entry must name an interrupt of the thread: the
// open one, which it answers, or one that ended, which it must have
// answered the same way (a replay: the thread is shown as it is now).
func (r *run) resume(p *store.Park) {
	if p != nil && !agent.MayAnswer(r.ctx, r.h.eng.AddressedTo(p)) {
		p = nil // addressed to someone else: as if it were not open
	}
	var answer *Resume
	for i, e := range r.in.Resume {
		if p != nil && e.InterruptID == p.ID {
			answer = &r.in.Resume[i]
			continue
		}
		if !r.replayed(e) {
			return
		}
	}
	if answer == nil {
		r.finishAsStored()
		return
	}
	r.answer(p, *answer)
}

// replayed checks entry e, which names no open interrupt: true when it
// answered an ended interrupt of the thread exactly as that ended;
// otherwise the run fails, saying what became of it.
func (r *run) replayed(e Resume) bool {
	if _, err := uuid.Parse(e.InterruptID); err != nil {
		r.fail(codeResumeUnknown, fmt.Sprintf("interrupt %q is not one of this thread's", e.InterruptID), nil)
		return false
	}
	ended, err := r.h.store.EndedPark(r.ctx, r.thread.conv.ID, e.InterruptID)
	if errors.Is(err, store.ErrNotFound) {
		r.fail(codeResumeUnknown, fmt.Sprintf("interrupt %q is not one of this thread's, or no longer known", e.InterruptID), nil)
		return false
	}
	if err != nil {
		r.internal("load an ended interrupt", err)
		return false
	}
	if r.h.sameAnswer(ended, e) {
		return true
	}
	return r.ended(e.InterruptID)
}

// ended fails the run for a resume of interrupt id, which ended otherwise
// than the resume says; always false.
func (r *run) ended(id string) bool {
	why, err := r.h.eng.Ended(r.ctx, r.thread.conv.ID, id)
	switch {
	case err != nil:
		r.internal("look up an ended interrupt", err)
	case why == nil:
		r.fail(codeResumeUnknown, fmt.Sprintf("interrupt %q is not one of this thread's, or no longer known", id), nil)
	case why.Status == string(kindkit.StatusNoResponse):
		r.fail(codeExpired, "interrupt "+id+": "+why.Error(), nil)
	default:
		r.fail(codeEnded, "interrupt "+id+": "+why.Error(), nil)
	}
	return false
}

// answer answers open interrupt p with e and follows the turn it
// resumes.
func (r *run) answer(p *store.Park, e Resume) {
	stack.Grow() // for the kind's validator, before the stack is deep
	if e.Status == StatusResolved && !p.Deadline.IsZero() && !r.h.clock.Now().Before(p.Deadline) {
		// Its deadline's sweep has not run yet; it will.
		r.fail(codeExpired, "interrupt "+p.ID+" expired at "+expiresAt(p)+": it can be cancelled, not answered", nil)
		return
	}
	events, stop := r.subscribe()
	defer stop()
	var requestID string
	ack := func(t agent.Taken) { requestID = t.RequestID }
	var ok bool
	var err error
	if p.Type == store.ParkConfirmation {
		d, errs := decision(e)
		if len(errs) > 0 {
			r.fail(codeResumeInvalid, invalidMessage(errs), map[string]any{"errors": errs})
			return
		}
		ok, err = r.h.eng.Decide(r.ctx, r.thread.sess, p.ID, d, ack)
		if errors.Is(err, agent.ErrDecisionNotAllowed) {
			errs := []kindkit.FieldError{{Field: "editedArgs", Message: "this tool's calls are approved or denied as they are"}}
			r.fail(codeResumeInvalid, invalidMessage(errs), map[string]any{"errors": errs})
			return
		}
	} else {
		a := agent.Answer{Values: e.Payload, Declined: e.Status == StatusCancelled}
		if !a.Declined && len(a.Values) == 0 {
			a.Values = json.RawMessage("null") // the kind says what is missing
		}
		ok, err = r.h.eng.Submit(r.ctx, r.thread.sess, p.ID, a, ack)
	}
	var invalid *agent.InvalidAnswerError
	var late *agent.AskEndedError
	switch {
	case errors.As(err, &invalid):
		r.fail(codeResumeInvalid, invalidMessage(invalid.Errors), map[string]any{"errors": invalid.Errors})
	case errors.As(err, &late):
		// Taken meanwhile: by this very answer sent twice, or another.
		if r.replayed(e) {
			r.finishAsStored()
		}
	case errors.Is(err, agent.ErrKindNotHosted):
		r.fail(codeNotHosted, "interrupt "+p.ID+" asks a kind this server does not host", nil)
	case err != nil:
		r.internal("answer the interrupt", err)
	case !ok:
		r.fail(codeResumeUnknown, "interrupt "+p.ID+" is no longer open", nil)
	default:
		r.follow(events, requestID, p.ID)
	}
}

// decision reads a confirmation's resume: {"approved": bool} approves
// or rejects the call, with editedArgs an approval runs it with those
// arguments (AG-UI's approve-with-edits; the tool's policy must allow
// it); cancelled rejects it.
func decision(e Resume) (agent.Decided, []kindkit.FieldError) {
	d := agent.Decided{Decision: agent.Reject}
	if e.Status == StatusCancelled {
		return d, nil
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(e.Payload, &payload); err != nil || payload == nil {
		return d, []kindkit.FieldError{{Field: "approved", Message: `the payload must be an object {"approved": true|false}`}}
	}
	var errs []kindkit.FieldError
	var approved bool
	if raw, ok := payload["approved"]; !ok {
		errs = append(errs, kindkit.FieldError{Field: "approved", Message: "required"})
	} else if err := json.Unmarshal(raw, &approved); err != nil {
		errs = append(errs, kindkit.FieldError{Field: "approved", Message: "must be true or false"})
	}
	for k := range payload {
		if k != "approved" && k != "editedArgs" {
			errs = append(errs, kindkit.FieldError{Field: k, Message: "unknown field"})
		}
	}
	switch edited, ok := payload["editedArgs"]; {
	case approved && ok:
		d = agent.Decided{Decision: agent.Edit, Arguments: edited}
	case approved:
		d.Decision = agent.Approve
	}
	return d, errs
}

func invalidMessage(errs []kindkit.FieldError) string {
	msg := fmt.Sprintf("the resume payload has %d problems; the interrupt stays open:", len(errs))
	for _, e := range errs {
		msg += fmt.Sprintf(" %s: %s;", e.Field, e.Message)
	}
	return msg[:len(msg)-1]
}

// subscribe listens to the thread's conversation, from before the run
// starts or resumes its turn, so that nothing the turn says is missed.
// The events wait in a buffer: a subscriber must never block the turn.
// A full buffer closes the channel: the run ends, lagging.
func (r *run) subscribe() (<-chan agent.Event, func()) {
	events := make(chan agent.Event, eventBuffer)
	lagged := false // fn is called one event at a time
	stop := r.h.eng.Subscribe(r.ctx, r.thread.conv.ID, agent.Position{}, func(ev agent.Event) {
		if lagged {
			return
		}
		select {
		case events <- ev:
		default:
			lagged = true
			close(events)
		}
	})
	return events, stop
}

// follow turns the events of turn requestID's run after park after ("":
// its first run) into AG-UI's until the run ends. What the turn said
// before that park, relayed late from the process that raised it, is not
// this run's: its prompt would end the run with the interrupt just
// answered. A client that goes away aborts a turn that has not parked yet,
// as a closed socket does on /ws; a turn that an answer resumed goes on
// (its answer was taken, and is owed its reply), and the client's next
// run gets the reply in its MESSAGES_SNAPSHOT.
func (r *run) follow(events <-chan agent.Event, requestID, after string) {
	for {
		select {
		case <-r.ctx.Done():
			r.h.eng.Abort(r.thread.conv.ID, requestID)
			return
		case <-r.h.closing:
			r.endText()
			r.fail(codeDraining, "the server is going away; the turn goes on: run again for what it says", nil)
			return
		case ev, open := <-events:
			if !open {
				r.endText()
				r.fail(codeLagging, "the run's stream fell behind the turn; the turn goes on: run again for what it says", nil)
				return
			}
			if ev.RequestID != requestID || ev.After != after || !r.event(ev) {
				continue
			}
			if r.broken {
				r.h.eng.Abort(r.thread.conv.ID, requestID)
			}
			return
		}
	}
}

// event sends what ev says; true when it ends the run.
func (r *run) event(ev agent.Event) bool {
	switch ev.Kind {
	case agent.EventText:
		if ev.Text == "" {
			return false
		}
		if r.text == "" {
			r.text = uuid.NewString()
			r.send(textStart{Type: "TEXT_MESSAGE_START", Timestamp: r.now(), MessageID: r.text, Role: "assistant"})
		}
		r.send(textContent{Type: "TEXT_MESSAGE_CONTENT", Timestamp: r.now(), MessageID: r.text, Delta: ev.Text})
	case agent.EventToolCall:
		r.toolCall(ev.Call)
	case agent.EventToolResult:
		r.endText()
		r.send(toolResult{Type: "TOOL_CALL_RESULT", Timestamp: r.now(), MessageID: uuid.NewString(), ToolCallID: ev.Call.ID, Content: ev.Text, Role: "tool"})
	case agent.EventPrompt:
		// A raise's or a confirmation's call is told after its prompt
		// (a host tool's Ask went out when the tool started): it goes
		// first here, since the run ends with the interrupt.
		if _, raised := r.h.catalog.ByTool(ev.Park.ToolCall.Name); raised || ev.Park.Type == store.ParkConfirmation {
			r.toolCall(ev.Park.ToolCall)
		}
		r.endText()
		r.snapshot()
		r.finish(outcome{Type: "interrupt", Interrupts: []interrupt{r.h.interruptOf(ev.Park)}})
		return true
	case agent.EventReply:
		r.endText()
		r.snapshot()
		r.finish(outcome{Type: "success"})
		return true
	case agent.EventCancelled:
		r.endText()
		r.snapshot()
		r.finish(outcome{Type: "cancelled"})
		return true
	case agent.EventFailed:
		r.endText()
		r.fail(codeTurnFailed, "the turn failed", nil)
		return true
	}
	return r.broken
}

// toolCall streams a tool call once per run, attributed to the text
// message it follows.
func (r *run) toolCall(call store.ToolCall) {
	if r.emitted[call.ID] {
		return
	}
	r.emitted[call.ID] = true
	parent := r.text
	r.endText()
	r.send(toolStart{Type: "TOOL_CALL_START", Timestamp: r.now(), ToolCallID: call.ID, ToolCallName: call.Name, ParentMessageID: parent})
	r.send(toolArgs{Type: "TOOL_CALL_ARGS", Timestamp: r.now(), ToolCallID: call.ID, Delta: call.Arguments})
	r.send(toolEnd{Type: "TOOL_CALL_END", Timestamp: r.now(), ToolCallID: call.ID})
}

func (r *run) endText() {
	if r.text != "" {
		r.send(textEnd{Type: "TEXT_MESSAGE_END", Timestamp: r.now(), MessageID: r.text})
		r.text = ""
	}
}

// finishAsStored ends a run that started nothing with the thread as it is
// stored: its messages, and its open interrupt when it has one.
func (r *run) finishAsStored() {
	p, err := r.pending()
	if err != nil {
		r.internal("load the open interrupt", err)
		return
	}
	r.snapshot()
	if p != nil {
		r.finish(outcome{Type: "interrupt", Interrupts: []interrupt{r.h.interruptOf(p)}})
		return
	}
	r.finish(outcome{Type: "success"})
}

func (r *run) finish(o outcome) {
	r.send(runFinished{Type: "RUN_FINISHED", Timestamp: r.now(), ThreadID: r.in.ThreadID, RunID: r.in.RunID, Outcome: o})
}

func (r *run) fail(code, message string, metadata map[string]any) {
	r.send(runError{Type: "RUN_ERROR", Timestamp: r.now(), Code: code, Message: message, Metadata: metadata})
}

func (r *run) internal(what string, err error) {
	r.h.log.Error("agui: "+what, "runId", r.in.RunID, "err", err)
	r.fail(codeInternal, "internal error", nil)
}

// send writes one event; after a failed write nothing more is sent.
func (r *run) send(v any) {
	if r.broken {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		r.h.log.Error("agui: encode event", "err", err)
		r.broken = true
		return
	}
	// A socket's deadline is the wall clock's, not the engine's clock.
	_ = r.rc.SetWriteDeadline(time.Now().Add(writeTimeout)) // unsupported by some writers: nothing to do then
	if _, err := fmt.Fprintf(r.w, "data: %s\n\n", data); err != nil {
		r.broken = true
		return
	}
	if err := r.rc.Flush(); err != nil {
		r.broken = true
	}
}

// now is an event's timestamp: milliseconds since the Unix epoch, as the
// AG-UI SDKs write it.
func (r *run) now() int64 { return r.h.clock.Now().UnixMilli() }
