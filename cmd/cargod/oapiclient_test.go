package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAClientGeneratedFromTheServedDocumentWorks generates a Go client
// from the document the server serves with oapi-codegen, as an integrator
// would (its defaults; the version testdata/oapiclient/go.mod pins as a
// tool), builds it with the program beside it and runs token → RFQ → list
// against the server. The go command fetches oapi-codegen and the client's
// runtime through the module proxy the first time, as it fetches the
// service's own modules.
func TestAClientGeneratedFromTheServedDocumentWorks(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	res, err := http.Get(s.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d, %v", res.StatusCode, err)
	}

	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "oapiclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", "cargo", "-o", "cargo/client.gen.go", "openapi.json")
	run("go", "build", "-o", "oapiclient", ".")
	out := run(filepath.Join(dir, "oapiclient"), "-base", s.base, "-client", "demo-forwarder", "-secret", "demo-forwarder-secret")
	if !strings.Contains(out, "ok") {
		t.Errorf("the generated client said %q", out)
	}
}
