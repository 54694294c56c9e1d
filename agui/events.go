package agui

import "encoding/json"

// The AG-UI 1.0 events a run sends, one type each, so that a field goes
// out only on the event that has it. Names and shapes follow
// @ag-ui/core 1.0.0 (its EventSchemas); the tests check every event
// against them with the real package.

// protocolVersion is the AG-UI version this package speaks.
const protocolVersion = "1.0"

type runStarted struct {
	Type            string `json:"type"` // RUN_STARTED
	Timestamp       int64  `json:"timestamp"`
	ThreadID        string `json:"threadId"`
	RunID           string `json:"runId"`
	ProtocolVersion string `json:"protocolVersion"`
}

type runFinished struct {
	Type      string  `json:"type"` // RUN_FINISHED
	Timestamp int64   `json:"timestamp"`
	ThreadID  string  `json:"threadId"`
	RunID     string  `json:"runId"`
	Outcome   outcome `json:"outcome"`
}

// outcome is why a run finished: "success", "interrupt" (with its
// interrupts) or "cancelled".
type outcome struct {
	Type       string      `json:"type"`
	Interrupts []interrupt `json:"interrupts,omitempty"`
}

type interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
	ExpiresAt      string          `json:"expiresAt,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
}

type runError struct {
	Type      string         `json:"type"` // RUN_ERROR
	Timestamp int64          `json:"timestamp"`
	Message   string         `json:"message"`
	Code      string         `json:"code"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type textStart struct {
	Type      string `json:"type"` // TEXT_MESSAGE_START
	Timestamp int64  `json:"timestamp"`
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
}

type textContent struct {
	Type      string `json:"type"` // TEXT_MESSAGE_CONTENT
	Timestamp int64  `json:"timestamp"`
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

type textEnd struct {
	Type      string `json:"type"` // TEXT_MESSAGE_END
	Timestamp int64  `json:"timestamp"`
	MessageID string `json:"messageId"`
}

type toolStart struct {
	Type            string `json:"type"` // TOOL_CALL_START
	Timestamp       int64  `json:"timestamp"`
	ToolCallID      string `json:"toolCallId"`
	ToolCallName    string `json:"toolCallName"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
}

type toolArgs struct {
	Type       string `json:"type"` // TOOL_CALL_ARGS
	Timestamp  int64  `json:"timestamp"`
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

type toolEnd struct {
	Type       string `json:"type"` // TOOL_CALL_END
	Timestamp  int64  `json:"timestamp"`
	ToolCallID string `json:"toolCallId"`
}

type toolResult struct {
	Type       string `json:"type"` // TOOL_CALL_RESULT
	Timestamp  int64  `json:"timestamp"`
	MessageID  string `json:"messageId"`
	ToolCallID string `json:"toolCallId"`
	Content    string `json:"content"`
	Role       string `json:"role"`
}

type messagesSnapshot struct {
	Type      string `json:"type"` // MESSAGES_SNAPSHOT
	Timestamp int64  `json:"timestamp"`
	Messages  []any  `json:"messages"` // userMessage, assistantMessage and toolMessage
}

type userMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"` // user
	Content string `json:"content"`
}

type assistantMessage struct {
	ID        string     `json:"id"`
	Role      string     `json:"role"` // assistant
	Content   string     `json:"content,omitempty"`
	ToolCalls []toolCall `json:"toolCalls,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolMessage struct {
	ID         string `json:"id"`
	Role       string `json:"role"` // tool
	Content    string `json:"content"`
	ToolCallID string `json:"toolCallId"`
	Error      string `json:"error,omitempty"`
}

// capabilities is what GET /capabilities answers: AG-UI's
// AgentCapabilities, the parts kindkit declares.
type capabilities struct {
	Identity struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"identity"`
	Transport struct {
		Streaming bool `json:"streaming"`
	} `json:"transport"`
	Tools struct {
		Supported      bool `json:"supported"`
		ClientProvided bool `json:"clientProvided"`
	} `json:"tools"`
	HumanInTheLoop struct {
		Supported        bool `json:"supported"`
		Approvals        bool `json:"approvals"`
		Interrupts       bool `json:"interrupts"`
		ApproveWithEdits bool `json:"approveWithEdits"`
	} `json:"humanInTheLoop"`
}
