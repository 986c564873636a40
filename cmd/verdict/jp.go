package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/engine/jmespath"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/internal/safefile"
)

// newJPCmd is kyverno jp: JMESPath with Kyverno's functions, for policy
// authors.
func newJPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jp",
		Short: "Evaluate, parse and list JMESPath with Kyverno's functions (kyverno jp)",
		Long: `Evaluate JMESPath expressions on a JSON or YAML document (query), print
their parse tree (parse) and list Kyverno's custom functions with their
signatures (function), as kyverno jp does. Expressions are evaluated by
Verdict's engine, with the functions and limits of policies.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newJPQueryCmd(), newJPParseCmd(), newJPFunctionCmd())
	// kyverno's global flags: jp writes no log lines, -v changes nothing.
	registerKlogFlags(cmd.PersistentFlags()) // kyvernoflags.go
	return cmd
}

func newJPQueryCmd() *cobra.Command {
	var (
		compact, unquoted bool
		input             string
		queryFiles        []string
		maxInput          int
	)
	cmd := &cobra.Command{
		Use:   "query [-i input] [-q query|query]...",
		Short: "Evaluate JMESPath expressions on a JSON or YAML document",
		Long: `Evaluate each expression (the arguments, then the content of each -q
file) on the document of -i (JSON or YAML), and print "# <expression>"
and the result as JSON, as kyverno jp query does. Without -i the document
is read from standard input; without an expression, the expression is
(then -i is required). Each file, and standard input, is read up to
--max-input-bytes.`,
		Example: `  verdict jp query -i pod.yaml 'metadata.labels.app'
  kubectl get pod x -o yaml | verdict jp query -u 'to_upper(metadata.name)'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			limit := int64(maxInput)
			queries, err := argsAndFiles(args, queryFiles, limit, "failed to read file")
			if err != nil {
				return err
			}
			var doc []byte
			if input != "" {
				b, err := safefile.ReadFile(input, limit)
				if err != nil {
					return fmt.Errorf("failed to read file %s: %w", input, err)
				}
				doc = b
			}
			if len(queries) == 0 && doc == nil {
				return errors.New("at least one query or input object is required")
			}
			if len(queries) == 0 {
				q, err := readStdin(cmd, "Enter a jmespath expression and hit Ctrl+D.", limit)
				if err != nil {
					return err
				}
				queries = append(queries, string(q))
			}
			if doc == nil {
				b, err := readStdin(cmd, "Enter input object and hit Ctrl+D.", limit)
				if err != nil {
					return err
				}
				doc = b
			}
			var data any
			if err := yaml.Unmarshal(doc, &data); err != nil {
				return fmt.Errorf("error parsing input json: %w", err)
			}
			interp := jmespath.New(jmespath.Options{})
			out := cmd.OutOrStdout()
			for _, q := range queries {
				result, err := jpEvaluate(interp, q, data)
				if err != nil {
					return err
				}
				if err := jpPrint(out, q, result, unquoted, compact); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&compact, "compact", "c", false, "print compact JSON, without the whitespace")
	f.BoolVarP(&unquoted, "unquoted", "u", false, "print a string result without quotes")
	f.StringSliceVarP(&queryFiles, "query", "q", nil, "read a JMESPath expression from this file (repeatable)")
	f.StringVarP(&input, "input", "i", "", "read the document from this JSON or YAML file instead of standard input")
	f.IntVar(&maxInput, "max-input-bytes", kyverno.DefaultMaxDocumentBytes, "largest input document or expression file, and largest standard input, in bytes")
	return cmd
}

// jpEvaluate parses and evaluates one expression, with kyverno jp query's
// error texts: a syntax error fails to compile, a bad function call (which
// Verdict finds before evaluating) fails the evaluation.
func jpEvaluate(interp *jmespath.Interpreter, query string, data any) (any, error) {
	if err := jmespath.CheckSyntax(query); err != nil {
		return nil, fmt.Errorf("failed to compile JMESPath: %s, error: %w", query, err)
	}
	q, err := jmespath.Parse(query)
	if err != nil {
		return nil, fmt.Errorf("error evaluating JMESPath expression: %w", err)
	}
	result, err := interp.Search(q, data)
	if err != nil {
		return nil, fmt.Errorf("error evaluating JMESPath expression: %w", err)
	}
	return result, nil
}

// jpSyntax adds the location of a syntax error under its message, as
// kyverno jp prints it.
func jpSyntax(err error) error {
	if loc := jmespath.SyntaxLocation(err); loc != "" {
		return fmt.Errorf("%w\n%s", err, loc)
	}
	return err
}

// jpPrint prints one result as kyverno jp query does.
func jpPrint(out io.Writer, query string, result any, unquoted, compact bool) error {
	var b []byte
	if s, ok := result.(string); ok && unquoted {
		b = []byte(s)
	} else {
		var err error
		if compact {
			b, err = json.Marshal(result)
		} else {
			b, err = json.MarshalIndent(result, "", "  ")
		}
		if err != nil {
			return fmt.Errorf("error marshalling result to JSON: %w", err)
		}
	}
	_, err := fmt.Fprintf(out, "# %s\n%s\n", query, b)
	return err
}

// readStdin reads standard input up to limit bytes; on a terminal it first
// says so on stderr (kyverno jp says it on stdout, always).
func readStdin(cmd *cobra.Command, prompt string, limit int64) ([]byte, error) {
	in := cmd.InOrStdin()
	if isTerminal(in) {
		fmt.Fprintf(cmd.ErrOrStderr(), "Reading from terminal input.\n%s\n", prompt)
	}
	b, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read standard input: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, &safefile.TooLargeError{Path: "standard input", Limit: limit}
	}
	return b, nil
}

func newJPParseCmd() *cobra.Command {
	var (
		files    []string
		maxInput int
	)
	cmd := &cobra.Command{
		Use:   "parse [-f file|expression]...",
		Short: "Print the parse tree of JMESPath expressions",
		Long: `Print "# <expression>" and the parse tree of each expression (the
arguments, then the content of each -f file; without any, standard
input), as kyverno jp parse does. A syntax error is printed with its
location.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			limit := int64(maxInput)
			exprs, err := argsAndFiles(args, files, limit, "failed read file")
			if err != nil {
				return err
			}
			if len(exprs) == 0 {
				b, err := readStdin(cmd, "Enter a jmespath expression and hit Ctrl+D.", limit)
				if err != nil {
					return err
				}
				exprs = append(exprs, string(b))
			}
			for _, e := range exprs {
				tree, err := jmespath.Tree(e)
				if err != nil {
					return jpSyntax(err)
				}
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "# %s\n%s\n", e, tree); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&files, "file", "f", nil, "read an expression from this file (repeatable)")
	f.IntVar(&maxInput, "max-input-bytes", kyverno.DefaultMaxDocumentBytes, "largest expression file, and largest standard input, in bytes")
	return cmd
}

func newJPFunctionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "function [function_name]...",
		Short: "List Kyverno's JMESPath functions with their signatures",
		Long: `List Kyverno's custom JMESPath functions (all, or those named), sorted,
each with its signature and note, as kyverno jp function does. The
JMESPath built-ins (length, contains, ...) are not listed.`,
		RunE: func(cmd *cobra.Command, names []string) error {
			var fns []jmespath.FunctionInfo
			for _, f := range jmespath.Functions() {
				if !f.Builtin && (len(names) == 0 || slices.Contains(names, f.Name)) {
					fns = append(fns, f)
				}
			}
			slices.SortFunc(fns, func(a, b jmespath.FunctionInfo) int { return strings.Compare(a.Signature, b.Signature) })
			var b strings.Builder
			for _, f := range fns {
				fmt.Fprintf(&b, "Name: %s\n  Signature: %s\n", f.Name, f.Signature)
				if f.Note != "" {
					fmt.Fprintf(&b, "  Note:      %s\n", f.Note)
				}
				b.WriteString("\n")
			}
			_, err := io.WriteString(cmd.OutOrStdout(), b.String())
			return err
		},
	}
}

// argsAndFiles is args, then the content of each file (each read up to
// limit bytes); a file that cannot be read is an error "<failed> <file>:
// <error>", in the words of the kyverno jp subcommand.
func argsAndFiles(args, files []string, limit int64, failed string) ([]string, error) {
	out := slices.Clone(args)
	for _, f := range files {
		b, err := safefile.ReadFile(f, limit)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", failed, f, err)
		}
		out = append(out, string(b))
	}
	return out, nil
}
