package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runIn(ctx, args, os.Stdin, stdout, stderr)
}

// runIn is run with stdin as the standard input (apply --resource -).
func runIn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "Error:", err)
	return exitUsage
}

// Exit codes: 0 when everything passed, 1 when a policy failed (apply) or
// an expected result did not hold (test), 2 when the command could not do
// its work (bad flags, unreadable or invalid input).
const exitUsage = 2

// exitError ends the command with an exit code; msg, when set, goes to
// stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "verdict",
		Short:         "Verdict is a Kyverno-compatible policy engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newTestCmd(), newApplyCmd(), newVersionCmd(), newEvalCmd(), newServeCmd(), newRunCmd(), newWebhookCmd(), newScanCmd(), newReportsCmd(), newCleanupCmd(), newJPCmd())
	return root
}

// isTerminal reports whether rw, a reader or a writer, is a character
// device (a terminal).
func isTerminal(rw any) bool {
	f, ok := rw.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// useColor says whether the tables of apply and test are coloured as
// Kyverno colours them: when w is a terminal, --remove-color is not given
// and NO_COLOR (https://no-color.org) is unset or empty; or when the
// hidden --force-color is given, for golden tests.
func useColor(w io.Writer, removeColor, force bool) bool {
	if removeColor {
		return false
	}
	return force || (os.Getenv("NO_COLOR") == "" && isTerminal(w))
}

// registerForceColor adds the hidden --force-color flag of useColor.
func registerForceColor(f *pflag.FlagSet, force *bool) {
	f.BoolVar(force, "force-color", false, "color the tables even when the output is not a terminal")
	_ = f.MarkHidden("force-color")
}
