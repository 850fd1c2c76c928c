package chat

// Message is one turn of a conversation. Role is what the template
// expects, usually "system", "user" or "assistant"; Content is the text.
type Message struct {
	Role    string
	Content string
}
