// A small use of a client generated from the served OpenAPI document:
// .ci/lint/run generates cargostream.ts with openapi-typescript and
// compiles both with tsc, so the document yields types a program can use.
// (A .ts, not a .d.ts: skipLibCheck passes over the libraries' .d.ts, not
// over the generated types.)
import createClient from "openapi-fetch";
import type { components, paths } from "./cargostream";

type Quote = components["schemas"]["Quote"];

// tokenRFQList gets a token, files an RFQ and lists the caller's quotes.
export async function tokenRFQList(baseUrl: string, clientId: string, clientSecret: string): Promise<Quote[]> {
  const api = createClient<paths>({ baseUrl });
  const token = await api.POST("/api/auth/token", {
    body: { grantType: "client_credentials", clientId, clientSecret },
  });
  if (token.error) {
    throw new Error(`${token.error.error}: ${token.error.errorDescription}`);
  }
  const headers = { Authorization: `${token.data.token_type} ${token.data.access_token}` };
  const rfq = await api.POST("/api/quotes", {
    headers,
    body: {
      routing: { origin: "FRA", destination: "JFK" },
      pieces: 2,
      grossWeightKg: 350.5,
      dimensionsCm: [{ l: 120, w: 80, h: 100, pieces: 2 }],
    },
  });
  if (rfq.error) {
    throw new Error(`${rfq.error.error}: ${rfq.error.errorDescription}`);
  }
  const list = await api.GET("/api/quotes", { headers, params: { query: { origin: rfq.data.origin, limit: 10 } } });
  if (list.error) {
    throw new Error(`${list.error.error}: ${list.error.errorDescription}`);
  }
  return list.data.quotes;
}
