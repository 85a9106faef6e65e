package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"

	"github.com/nanobot-durable/nanobot/config"
)

// lineReader yields the user's lines; Close restores the terminal.
type lineReader interface {
	// ReadLine shows prompt and reads a line; io.EOF at Ctrl-D, errInterrupted at Ctrl-C.
	ReadLine(prompt string) (string, error)
	// SetPrompt changes the prompt of a read in progress.
	SetPrompt(prompt string)
	Close() error
}

// The prompts: a message, and the answer to an approval request.
const (
	youPrompt      = "\nYou: "
	approvalPrompt = "Approve? [y/N/always] "
)

// lineRead is one line the user typed, or why there is none.
type lineRead struct {
	line string
	err  error
}

// prompter reads the user's lines one at a time, each after its prompt. A
// read left open — an approval answered in another chat while its prompt
// waited — is taken over by the next ask, with that ask's prompt.
type prompter struct {
	in      lineReader
	pending chan lineRead
}

func newPrompter(in lineReader) *prompter { return &prompter{in: in} }

// ask shows prompt and yields the next line; call took once it came.
func (p *prompter) ask(prompt string) <-chan lineRead {
	if p.pending != nil {
		p.in.SetPrompt(prompt)
		return p.pending
	}
	ch := make(chan lineRead, 1)
	p.pending = ch
	go func() {
		line, err := p.in.ReadLine(prompt)
		ch <- lineRead{line, err}
	}()
	return ch
}

// took marks the open read as consumed: the next ask reads a new line.
func (p *prompter) took() { p.pending = nil }

func (p *prompter) Close() error { return p.in.Close() }

var errInterrupted = errors.New("interrupted at the prompt")

// newLineReader edits lines with history (↑/↓, kept in
// <config dir>/history/cli) on a terminal, and reads plain lines otherwise.
func (s *cliSession) newLineReader() lineReader {
	if f, ok := s.app.stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) && isTerminal(s.app.stdout) {
		dir := filepath.Join(config.ConfigDir(s.r.cfg.Path), "history")
		history := ""
		if os.MkdirAll(dir, 0o700) == nil {
			history = filepath.Join(dir, "cli")
		}
		rl, err := readline.NewEx(&readline.Config{
			Prompt: youPrompt, HistoryFile: history, HistoryLimit: 1000,
			Stdin: f, Stdout: s.app.stdout, Stderr: s.app.stderr,
		})
		if err == nil {
			return &terminalReader{rl: rl}
		}
		s.log.Warn("line editing unavailable; reading plain lines", "error", err)
	}
	return newPlainReader(s.app.stdin, s.app.stdout)
}

type terminalReader struct{ rl *readline.Instance }

func (t *terminalReader) ReadLine(prompt string) (string, error) {
	t.rl.SetPrompt(prompt)
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupted
	}
	return line, err
}

func (t *terminalReader) SetPrompt(prompt string) {
	t.rl.SetPrompt(prompt)
	t.rl.Refresh()
}

func (t *terminalReader) Close() error { return t.rl.Close() }

// plainReader reads lines from a pipe or file, printing the prompt itself.
type plainReader struct {
	lines chan string
	out   io.Writer
}

func newPlainReader(in io.Reader, out io.Writer) *plainReader {
	p := &plainReader{lines: make(chan string), out: out}
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

func (p *plainReader) ReadLine(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	line, ok := <-p.lines
	if !ok {
		return "", io.EOF
	}
	return line, nil
}

func (p *plainReader) SetPrompt(prompt string) { fmt.Fprint(p.out, "\n"+prompt) }

func (p *plainReader) Close() error { return nil }

// interactive reads a line, shows the reply, until Ctrl-D, "exit" or Ctrl-C at the prompt.
func (s *cliSession) interactive(ctx context.Context) error {
	fmt.Fprintln(s.app.stdout, "🐈 nanobot — type a message, Ctrl-D to quit (Ctrl-C stops a running turn)")
	if s.thin.Load() {
		fmt.Fprintln(s.app.stdout, "(a gateway is running: it runs the turns, this terminal shows them)")
	}
	for {
		got := s.input.ask(youPrompt)
		var r lineRead
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.app.stdout)
			return nil
		case <-s.interrupts: // Ctrl-C at a plain prompt
			fmt.Fprintln(s.app.stdout)
			return nil
		case r = <-got:
			s.input.took()
		}
		if r.err != nil {
			fmt.Fprintln(s.app.stdout)
			return nil // Ctrl-D, Ctrl-C at the prompt, or the input ended
		}
		line := strings.TrimSpace(r.line)
		if line == "" {
			continue
		}
		if line == "exit" || line == "quit" {
			return nil
		}
		fmt.Fprint(s.app.stdout, "🐈 ")
		_, err := s.send(ctx, line)
		switch {
		case errors.Is(err, errQuit):
			return nil
		case errors.Is(err, errStopped):
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintln(s.app.stderr, "error:", oneLine(err.Error()))
		}
	}
}
