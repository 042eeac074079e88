// Command oapiclient gets a token, files an RFQ and lists quotes with the
// client oapi-codegen generates from a server's OpenAPI document, as an
// integrator would. TestAClientGeneratedFromTheServedDocumentWorks
// generates package cargo beside it from the document the server serves,
// builds it and runs it against that server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"oapiclient/cargo"
)

func main() {
	base := flag.String("base", "", "the server's URL")
	id := flag.String("client", "", "client id")
	secret := flag.String("secret", "", "client secret")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, *base, *id, *secret); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("token, RFQ and list: ok")
}

// weight has more digits than a float32 holds: a client that decoded
// numbers as float32 would read it back as 1250.550048828125.
const weight = 1250.55

func run(ctx context.Context, base, id, secret string) error {
	api, err := cargo.NewClientWithResponses(base)
	if err != nil {
		return err
	}
	tok, err := api.CreateTokenWithResponse(ctx, nil, cargo.TokenRequest{GrantType: cargo.TokenRequestGrantTypeClientCredentials,
		ClientId: &id, ClientSecret: &secret})
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	if tok.JSON200 == nil {
		return fmt.Errorf("token: %d %s", tok.StatusCode(), tok.Body)
	}
	if t := tok.JSON200; t.AccessToken != t.OAuthAccessToken || t.ExpiresIn != t.OAuthExpiresIn || string(t.TokenType) != string(t.OAuthTokenType) {
		return fmt.Errorf("token: the spec's fields and RFC 6749's differ: %s", tok.Body)
	}
	bearer := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+tok.JSON200.AccessToken)
		return nil
	}

	pieces := int32(2)
	rfq := cargo.RFQ{GrossWeightKg: weight, Pieces: &pieces, DimensionsCm: &[]cargo.DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}}
	rfq.Routing.Origin, rfq.Routing.Destination = "FRA", "JFK"
	created, err := api.CreateQuoteWithResponse(ctx, nil, rfq, bearer)
	if err != nil {
		return fmt.Errorf("RFQ: %w", err)
	}
	if created.JSON201 == nil {
		return fmt.Errorf("RFQ: %d %s", created.StatusCode(), created.Body)
	}
	if created.JSON201.Weight != weight {
		return fmt.Errorf("RFQ: weight %v, want %v", created.JSON201.Weight, weight)
	}

	// Cargo-Sequence makes the list see the RFQ, whichever replica answers.
	seq, err := strconv.ParseInt(created.HTTPResponse.Header.Get("Cargo-Sequence"), 10, 64)
	if err != nil {
		return fmt.Errorf("RFQ: Cargo-Sequence: %w", err)
	}
	list, err := api.ListQuotesWithResponse(ctx, &cargo.ListQuotesParams{CargoSequence: &seq}, bearer)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if list.JSON200 == nil {
		return fmt.Errorf("list: %d %s", list.StatusCode(), list.Body)
	}
	if !slices.ContainsFunc(list.JSON200.Quotes, func(q cargo.Quote) bool { return q.Id == created.JSON201.Id }) {
		return errors.New("list: the RFQ filed is not in it")
	}
	return nil
}
