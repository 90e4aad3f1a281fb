package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/history"
)

// A conversation turn: stream the answer, then keep the returned messages
// as the history of the next turn.
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8700", "field-guide", client.Options{AppKey: "the-app-key", User: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	store, err := history.Open("conversations")
	if err != nil {
		log.Fatal(err)
	}
	past, _ := store.Messages("conv-1")
	s := c.Turn(ctx, client.TurnRequest{Text: "Which birds in the guide hunt fish?", History: past, ContextID: "conv-1"})
	for ev, err := range s.Events() {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case client.TextDelta:
			fmt.Print(e.Text)
		case client.TurnFinished:
			fmt.Printf("\n(%s, %d+%d tokens)\n", e.Status, e.PromptTokens, e.CompletionTokens)
		}
	}
	if err := store.Append("conv-1", c.AgentID(), s.Result().Messages...); err != nil {
		log.Fatal(err)
	}
}
