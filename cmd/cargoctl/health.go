package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const healthSynopsis = `Usage: cargoctl health [--url URL] [--timeout D]

Asks cargod whether it is ready to serve (GET /readyz), prints its answer
and exits with status 0 when it is 200, 1 otherwise. It is the health check
of the container image, which has no shell, curl or wget to make the request.
`

func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("health", healthSynopsis)
	base := fs.String("url", defaultURL(getenv), "base `URL` of the Cargostream HTTP API (env CARGOCTL_URL; else CARGO_ADDR, on loopback)")
	timeout := 2 * time.Second
	fs.Var(positiveDuration{&timeout}, "timeout", "how long to `wait` for the answer")
	if help, err := parseFlags(fs, args, false, stdout); help || err != nil {
		return err
	}
	if err := checkURL("health", *base); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(*base, "/") + "/readyz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: apiTransport}).Do(req)
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("cargod at %s did not answer within %s", *base, timeout)
	case err != nil:
		return unreachable(*base, err)
	}
	defer resp.Body.Close()
	// The answer says what is not ready; docker keeps it with the check's result.
	if _, err := io.Copy(stdout, io.LimitReader(resp.Body, 4096)); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}
