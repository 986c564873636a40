package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeCommands runs the `bin/verdict apply|test|jp` commands of the
// README's Usage as written (from a folder whose examples/ is the
// repository's), with the standard input of a `cat FILE |` before them:
// each must run, with exit code 0 or 1 (1: a policy failed, as the
// examples mean to show), and the example test suite must pass.
func TestReadmeCommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 15 {
		t.Fatalf("README.md has %d apply/test/jp commands, want at least 15", len(cmds))
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, line := range cmds {
		t.Run(line, func(t *testing.T) {
			var stdin []byte
			cmd := line
			if rest, ok := strings.CutPrefix(cmd, "cat "); ok {
				file, after, found := strings.Cut(rest, " | ")
				if !found {
					t.Fatalf("cannot run %q", line)
				}
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				stdin, cmd = b, after
			}
			args := shellWords(t, strings.TrimPrefix(cmd, "bin/verdict "))
			var stdout, stderr bytes.Buffer
			code := runIn(context.Background(), args, bytes.NewReader(stdin), &stdout, &stderr)
			if strings.Contains(line, "verdict test ") && code != 0 {
				t.Errorf("%s: exit code %d, want 0 (the example suite passes)\nstdout: %.1000s", line, code, stdout.String())
			}
			if code != 0 && code != 1 {
				t.Errorf("%s: exit code %d, want 0 or 1\nstdout: %.1000s\nstderr: %.1000s", line, code, stdout.String(), stderr.String())
			}
			if stdout.Len() == 0 && !strings.Contains(line, " -o mutated/") {
				t.Errorf("%s printed nothing; stderr: %.1000s", line, stderr.String())
			}
		})
	}
}

// readmeCommands returns the command lines (continuations joined) of the
// sh blocks of README's Usage that run bin/verdict apply, test or jp.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	inUsage, inBlock := false, false
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			inUsage = l == "## Usage"
		case inUsage && l == "```sh":
			inBlock = true
		case inBlock && l == "```":
			inBlock = false
		case inBlock:
			cur += strings.TrimSpace(l)
			if strings.HasSuffix(cur, `\`) {
				cur = strings.TrimSuffix(cur, `\`) + " "
				continue
			}
			c := stripComment(cur)
			cur = ""
			for _, sub := range []string{"apply ", "test ", "jp "} {
				// --cluster needs a cluster: TestE2EApplyCluster runs it.
				if strings.Contains(c, "bin/verdict "+sub) && !strings.Contains(c, " --cluster") {
					out = append(out, c)
					break
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stripComment drops a # comment outside quotes.
func stripComment(s string) string {
	var q rune
	for i, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q == 0 && (r == '\'' || r == '"'):
			q = r
		case q == 0 && r == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// shellWords splits s as sh does, for words with single and double quotes
// only.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var w strings.Builder
	inWord := false
	var q rune
	for _, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			q, inWord = r, true
		case r == ' ':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if q != 0 {
		t.Fatalf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}
