package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// approvalAnswer is the command a line typed at the approval prompt sends:
// y → approve, always → approve this exact call from now on, rule → approve
// and the rule the request offers, anything else → deny.
func approvalAnswer(line, id string) string {
	switch word := strings.ToLower(strings.TrimSpace(line)); word {
	case "y", "yes":
		return protocol.ApproveCommand + " " + id
	case protocol.VerdictAlways, protocol.VerdictRule:
		return protocol.ApproveCommand + " " + id + " " + word
	}
	return protocol.DenyCommand + " " + id
}

// askApproval shows what a request needs after its text (the CLI channel
// printed it): the prompt at a terminal, the way to answer in one-shot
// mode. The channel yields the typed answer; nil in one-shot mode.
func (s *cliSession) askApproval(req protocol.ApprovalRequest) <-chan lineRead {
	if s.input == nil {
		fmt.Fprintf(s.cli.Out, "(waiting for an answer: a button or /approve in the chat that asked, or nanobot agent -s %s -m %q)\n",
			s.key, protocol.ApproveCommand+" "+req.ID)
		return nil
	}
	return s.input.ask(approvalPrompt)
}

// answerApproval sends the answer typed at the prompt as this terminal's
// message; the turn's reply then comes to the message that asked and to
// this one. Ctrl-C at the prompt stops the turn, as it does while it runs.
func (s *cliSession) answerApproval(ctx context.Context, r lineRead, req protocol.ApprovalRequest) error {
	if errors.Is(r.err, errInterrupted) {
		fmt.Fprintln(s.cli.Out, "[stopping…]")
		_, err := s.r.bus.Stop(ctx, s.key)
		return err
	}
	text := approvalAnswer(r.line, req.ID) // Ctrl-D or the input's end: nobody said yes
	fmt.Fprintln(s.cli.Out, "→ "+text)
	_, err := s.r.bus.Publish(ctx, s.message(text))
	return err
}

// catchUpWaiting shows the request a turn of this session waits on when
// this terminal opens. At a prompt it is asked here, and the turn's reply
// follows; in one-shot mode it is named and the message is sent as usual.
func (s *cliSession) catchUpWaiting(ctx context.Context, req protocol.ApprovalRequest) error {
	if s.input == nil {
		fmt.Fprintf(s.cli.Out, "… a turn of this session waits for approval [%s]: %s\n", req.ID, req.Call())
		return nil
	}
	fmt.Fprintln(s.cli.Out, "… a turn of this session waits for your approval:")
	fmt.Fprintln(s.cli.Out, req.Text())
	var r lineRead
	select {
	case r = <-s.input.ask(approvalPrompt):
		s.input.took()
	case <-s.interrupts:
		r.err = errInterrupted
	case <-ctx.Done():
		return ctx.Err()
	}
	if errors.Is(r.err, errInterrupted) {
		return s.answerApproval(ctx, r, req)
	}
	fmt.Fprint(s.cli.Out, "🐈 ")
	_, err := s.send(ctx, approvalAnswer(r.line, req.ID))
	if errors.Is(err, errStopped) {
		return nil
	}
	return err
}
