package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicBecomes500WithRequestID(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := withRequestID(withAccessLog(log, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal detail")
	})))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/boom", nil))

	var body errorBody
	json.Unmarshal(w.Body.Bytes(), &body)
	id := w.Header().Get("X-Request-Id")
	if w.Code != 500 || body.Error != "server_error" || !strings.Contains(body.ErrorDescription, id) || id == "" {
		t.Errorf("response = %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "secret internal detail") {
		t.Error("the panic's detail reached the client")
	}
	if !strings.Contains(logs.String(), "secret internal detail") || !strings.Contains(logs.String(), id) {
		t.Errorf("the log lacks the panic or the request id:\n%s", logs.String())
	}
}
