package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/verdict-policy/verdict/client"
	"github.com/verdict-policy/verdict/engine/kyverno"
	"github.com/verdict-policy/verdict/kyvernotest"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// defaultEvalServer is where `verdict eval` looks for a server: the
// address `verdict run` listens on by default.
const defaultEvalServer = "127.0.0.1:50051"

// connFlags are the flags of a connection to a decision server (or a
// report writer): --server and the client's TLS and token.
type connFlags struct {
	server     string
	tls        bool
	caFile     string
	certFile   string
	keyFile    string
	serverName string
	token      string
	tokenFile  string
}

// register adds the connection flags; serverHelp describes --server.
func (c *connFlags) register(f *pflag.FlagSet, serverHelp string) {
	f.StringVar(&c.server, "server", defaultEvalServer, serverHelp)
	f.BoolVar(&c.tls, "tls", false, "connect with TLS, checking the server against the system's CAs (implied by --ca-file, --cert-file)")
	f.StringVar(&c.caFile, "ca-file", "", "CA certificates (PEM) that sign the server's certificate")
	f.StringVar(&c.certFile, "cert-file", "", "client certificate (PEM), for a server that requires one (mTLS)")
	f.StringVar(&c.keyFile, "key-file", "", "key of --cert-file (PEM)")
	f.StringVar(&c.serverName, "server-name", "", "name expected in the server's certificate (default: the host of --server)")
	f.StringVar(&c.token, "token", "", "bearer token (prefer --token-file or $VERDICT_TOKEN)")
	f.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token (or $VERDICT_TOKEN)")
}

// decisionServerHelp is the help of --server for a decision server.
const decisionServerHelp = "address of the decision server (host:port, or a gRPC target such as dns:///verdict.verdict-system.svc:9443)"

// evalFlags are the flags of `verdict eval`.
type evalFlags struct {
	connFlags
	files      []string
	output     string
	operation  string
	background bool
	policies   []string
	timeout    time.Duration
	// maxDocument limits one YAML document of the -f files.
	maxDocument int
}

func newEvalCmd() *cobra.Command {
	var fl evalFlags
	cmd := &cobra.Command{
		Use:   "eval -f FILE... [--server HOST:PORT]",
		Short: "Evaluate resource files on a running decision server",
		Long: `Send each resource of the -f files and folders (multi-document YAML or
JSON; the YAML files of a folder) to a decision server (verdict serve or
verdict run) and print the decision like verdict apply: the failed rules of
each resource, the denied resources, then
"pass: N, fail: N, warn: N, error: N, skip: N".

With -o json or -o yaml the server's responses are printed as they are,
but for the result and the type of each rule result, in Kyverno's words
(pass, fail, warn, error, skip; Validation, Mutation, Generation,
ImageVerify) rather than the protobuf enum names.

The exit code is 1 when a resource is denied, 2 when a resource could not
be evaluated or the server could not be reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runEval(cmd.Context(), fl, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	fl.register(f, decisionServerHelp)
	f.StringSliceVarP(&fl.files, "filename", "f", nil, "resource files or folders")
	f.StringVarP(&fl.output, "output", "o", "", "print the raw responses: json or yaml")
	f.StringVar(&fl.operation, "operation", "CREATE", "admission operation: CREATE, UPDATE, DELETE or CONNECT")
	f.BoolVar(&fl.background, "background", false, "evaluate as a background scan (rules that need admission data are skipped; never denied)")
	f.StringSliceVar(&fl.policies, "policy", nil, "evaluate only these policies of the server (name, or namespace/name)")
	f.DurationVar(&fl.timeout, "timeout", 30*time.Second, "time limit of the whole evaluation")
	f.IntVar(&fl.maxDocument, "max-document-bytes", kyverno.DefaultMaxDocumentBytes, "largest YAML document of the -f files, in bytes")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// operations are the values of --operation.
var operations = map[string]verdictv1.Operation{
	"CREATE":  verdictv1.Operation_OPERATION_CREATE,
	"UPDATE":  verdictv1.Operation_OPERATION_UPDATE,
	"DELETE":  verdictv1.Operation_OPERATION_DELETE,
	"CONNECT": verdictv1.Operation_OPERATION_CONNECT,
}

// clientOptions turns the connection flags into client options.
func (fl connFlags) clientOptions() (client.Options, error) {
	var o client.Options
	if fl.tls || fl.caFile != "" || fl.certFile != "" || fl.keyFile != "" || fl.serverName != "" {
		cfg, err := client.TLSConfig(fl.caFile, fl.certFile, fl.keyFile, fl.serverName)
		if err != nil {
			return o, err
		}
		o.TLS = cfg
	}
	token := fl.token
	if fl.tokenFile != "" {
		b, err := os.ReadFile(fl.tokenFile)
		if err != nil {
			return o, fmt.Errorf("read token: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		token = os.Getenv("VERDICT_TOKEN")
	}
	o.BearerToken = token
	// A token may travel in plain text to a server on this machine only.
	o.AllowInsecureToken = loopback(fl.server)
	if token != "" && o.TLS == nil && !o.AllowInsecureToken {
		return o, fmt.Errorf("a bearer token for %s needs TLS: add --tls or --ca-file", fl.server)
	}
	return o, nil
}

// loopback reports whether a target names this machine.
func loopback(target string) bool {
	if i := strings.Index(target, ":///"); i >= 0 {
		target = target[i+4:]
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// evaluated is one resource and the server's answer.
type evaluated struct {
	resource *kyvernotest.Resource
	response *verdictv1.EvaluateResponse
	err      error
}

func runEval(ctx context.Context, fl evalFlags, stdout, stderr io.Writer) error {
	if fl.output != "" && fl.output != "json" && fl.output != "yaml" {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("invalid output format %q: want json or yaml", fl.output)}
	}
	op, ok := operations[strings.ToUpper(fl.operation)]
	if !ok {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("invalid operation %q: want CREATE, UPDATE, DELETE or CONNECT", fl.operation)}
	}
	opts, err := fl.clientOptions()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	resources, err := kyvernotest.LoadResources(fl.files, kyvernotest.LoadOptions{MaxDocumentBytes: fl.maxDocument, Warnings: stderr})
	if err != nil {
		return err
	}
	var reqOpts []client.RequestOption
	if op != verdictv1.Operation_OPERATION_CREATE {
		reqOpts = append(reqOpts, client.Operation(op))
	}
	if fl.background {
		reqOpts = append(reqOpts, client.Background())
	}
	if len(fl.policies) > 0 {
		reqOpts = append(reqOpts, client.Policies(fl.policies...))
	}
	items := make([]client.Item, 0, len(resources))
	for i, r := range resources {
		resOpts := reqOpts
		resource := any(r.Object)
		if op == verdictv1.Operation_OPERATION_DELETE {
			// A DELETE carries the resource as the old object.
			resOpts = append(resOpts[:len(resOpts):len(resOpts)], client.OldObject(r.Object))
			resource = nil
		}
		req, err := client.NewRequest(resource, resOpts...)
		if err != nil {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("%s:%d: %v", r.Path, r.Line, err)}
		}
		items = append(items, client.Item{ID: fmt.Sprint(i), Request: req})
	}

	c, err := client.Dial(fl.server, opts)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, fl.timeout)
	defer cancel()
	out := make([]evaluated, 0, len(items))
	err = c.Scan(ctx, iter.Seq[client.Item](func(yield func(client.Item) bool) {
		for _, it := range items {
			if !yield(it) {
				return
			}
		}
	}), func(r client.Result) error {
		out = append(out, evaluated{resource: resources[len(out)], response: r.Response, err: r.Err})
		return nil
	}, client.ScanOptions{})
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("evaluate on %s: %v", fl.server, describe(err))}
	}

	switch fl.output {
	case "json", "yaml":
		err = writeEvalRaw(stdout, out, fl.output)
	default:
		err = writeEvalText(stdout, fl.server, out)
	}
	if err != nil {
		return err
	}
	return evalExit(out)
}

// describe is a status error as a person reads it: the message, and the
// bad fields of an INVALID_ARGUMENT.
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	msg := fmt.Sprintf("%s: %s", st.Code(), st.Message())
	for _, v := range client.FieldViolations(err) {
		msg += fmt.Sprintf("\n  %s: %s", v.GetField(), v.GetDescription())
	}
	return msg
}

// display is a resource as verdict apply names it: namespace/Kind/name.
func display(r *kyvernotest.Resource) string {
	return r.Namespace + "/" + r.Kind + "/" + r.Name
}

// writeEvalText prints the decisions as verdict apply prints its results.
func writeEvalText(w io.Writer, server string, out []evaluated) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\nEvaluating %d resource(s) on %s...\n", len(out), server)
	var c kyvernotest.Counts
	var denied, failed []string
	for _, e := range out {
		if e.err != nil {
			failed = append(failed, fmt.Sprintf("%s (%s:%d): %s", display(e.resource), e.resource.Path, e.resource.Line, describe(e.err)))
			continue
		}
		// Failed rules, grouped by policy in the server's order.
		var policy string
		n := 0
		for _, r := range e.response.GetResults() {
			c.Add(r.GetResult().Name())
			if r.GetResult() != verdictv1.Result_RESULT_FAIL {
				continue
			}
			if name := r.GetPolicy(); name != policy {
				policy, n = name, 0
				fmt.Fprintf(bw, "policy %s -> resource %s failed:\n", name, display(e.resource))
			}
			n++
			msg := r.GetMessage()
			if msg == "" {
				msg = "validation failed"
			}
			fmt.Fprintf(bw, "%d - %s %s\n", n, r.GetRule(), msg)
		}
		for _, warning := range e.response.GetWarnings() {
			fmt.Fprintf(bw, "warning: resource %s: %s\n", display(e.resource), warning)
		}
		if !e.response.GetAllowed() {
			denied = append(denied, display(e.resource))
		}
	}
	if len(denied) > 0 {
		fmt.Fprintf(bw, "\ndenied: %d resource(s)\n", len(denied))
		for _, d := range denied {
			fmt.Fprintf(bw, "- %s\n", d)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(bw, "\nnot evaluated: %d resource(s)\n", len(failed))
		for _, f := range failed {
			fmt.Fprintf(bw, "- %s\n", f)
		}
	}
	fmt.Fprintf(bw, "\n%s\n", c)
	return bw.Flush()
}

// rawResult is one entry of -o json / -o yaml.
type rawResult struct {
	Resource string          `json:"resource"`
	Source   string          `json:"source"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// writeEvalRaw prints every response as protojson, in a list, as JSON or
// YAML.
func writeEvalRaw(w io.Writer, out []evaluated, format string) error {
	list := make([]rawResult, 0, len(out))
	for _, e := range out {
		r := rawResult{Resource: display(e.resource), Source: fmt.Sprintf("%s:%d", e.resource.Path, e.resource.Line)}
		if e.err != nil {
			r.Error = describe(e.err)
		} else {
			b, err := kyvernoWords(e.response)
			if err != nil {
				return fmt.Errorf("encode response: %w", err)
			}
			r.Response = b
		}
		list = append(list, r)
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("encode responses: %w", err)
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encode responses: %w", err)
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

// resultWords and ruleTypeWords are Kyverno's words for the enums of a
// RuleResult: the policy report results (policyreport.Result), and
// engineapi.RuleType. Values not listed keep their protobuf names.
var (
	resultWords = map[verdictv1.Result]string{
		verdictv1.Result_RESULT_PASS:  "pass",
		verdictv1.Result_RESULT_FAIL:  "fail",
		verdictv1.Result_RESULT_WARN:  "warn",
		verdictv1.Result_RESULT_ERROR: "error",
		verdictv1.Result_RESULT_SKIP:  "skip",
	}
	ruleTypeWords = map[verdictv1.RuleType]string{
		verdictv1.RuleType_RULE_TYPE_VALIDATION:   "Validation",
		verdictv1.RuleType_RULE_TYPE_MUTATION:     "Mutation",
		verdictv1.RuleType_RULE_TYPE_GENERATION:   "Generation",
		verdictv1.RuleType_RULE_TYPE_IMAGE_VERIFY: "ImageVerify",
	}
)

// kyvernoWords encodes a response as protojson, with the result and type
// of each rule result in Kyverno's words (resultWords, ruleTypeWords).
func kyvernoWords(resp *verdictv1.EvaluateResponse) (json.RawMessage, error) {
	b, err := protojson.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["results"]; !ok {
		return b, nil
	}
	results := make([]map[string]json.RawMessage, len(resp.GetResults()))
	if err := json.Unmarshal(m["results"], &results); err != nil {
		return nil, err
	}
	for i, rr := range resp.GetResults() {
		if w, ok := resultWords[rr.GetResult()]; ok {
			results[i]["result"], _ = json.Marshal(w)
		}
		if w, ok := ruleTypeWords[rr.GetType()]; ok {
			results[i]["type"], _ = json.Marshal(w)
		}
	}
	if m["results"], err = json.Marshal(results); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// evalExit is 2 when a resource was not evaluated, 1 when one was denied.
func evalExit(out []evaluated) error {
	var denied, failed int
	for _, e := range out {
		switch {
		case e.err != nil:
			failed++
		case !e.response.GetAllowed():
			denied++
		}
	}
	switch {
	case failed > 0:
		return &exitError{code: exitUsage, msg: fmt.Sprintf("exit as %d resource(s) could not be evaluated", failed)}
	case denied > 0:
		return &exitError{code: 1, msg: fmt.Sprintf("exit as %d resource(s) were denied", denied)}
	}
	return nil
}
