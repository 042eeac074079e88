package loadtest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// The request rows (create and get quote, and their bare handlers) send
// prepared requests on keep-alive connections of their own, one per
// client, as wrk does. net/http's client spends more CPU on a request than
// the bare handler does to answer it, so on a machine of two cores it would
// measure itself, and every ratio would come out near 1.

// requestTimeout bounds one request of a request row.
const requestTimeout = time.Minute

// request is an HTTP/1.1 request written out once and sent many times.
type request struct {
	method, path string
	wire         []byte
}

func prepare(base *url.URL, method, path, token string, body []byte) request {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: cargobench\r\n", method, base.Path, path, base.Host)
	if token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", token)
	}
	if body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return request{method: method, path: path, wire: b.Bytes()}
}

// conn is one client's keep-alive connection; it dials on first use and
// again after the server closes it.
type conn struct {
	base *url.URL
	c    net.Conn
	r    *bufio.Reader
	body []byte // the last answer's body, reused
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// dial connects to the base URL's host, at its port or the scheme's. A
// failed TLS dial's connection is a nil *tls.Conn, which as a net.Conn is
// not nil: kept so, closing it panicked.
func (c *conn) dial() (net.Conn, error) {
	port := c.base.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[c.base.Scheme]
	}
	addr := net.JoinHostPort(c.base.Hostname(), port)
	if c.base.Scheme != "https" {
		return net.Dial("tcp", addr)
	}
	tc, err := tls.Dial("tcp", addr, &tls.Config{ServerName: c.base.Hostname()})
	if err != nil {
		return nil, err
	}
	return tc, nil
}

// send sends req and expects the status want; any other answer is a
// *failure whose kind is the status.
func (c *conn) send(req request, want int) error {
	status, err := c.roundTrip(req)
	if err != nil {
		c.close()
		return &failure{kind: "no answer", detail: fmt.Sprintf("%s %s: %v", req.method, req.path, err)}
	}
	if status != want {
		return statusFailure(req.method, req.path, status, c.body)
	}
	return nil
}

func (c *conn) roundTrip(req request) (int, error) {
	if c.c == nil {
		nc, err := c.dial()
		if err != nil {
			return 0, err
		}
		c.c, c.r = nc, bufio.NewReader(nc)
	}
	c.c.SetDeadline(time.Now().Add(requestTimeout))
	if _, err := c.c.Write(req.wire); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, fmt.Errorf("not an HTTP/1.x status line: %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("status line %q: %v", line, err)
	}
	length, chunked, closing := 0, false, false
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		h = bytes.TrimSpace(h)
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	if chunked {
		err = c.readChunks()
	} else {
		err = c.read(length)
	}
	if err != nil {
		return 0, err
	}
	if closing {
		c.close()
	}
	return status, nil
}

// read appends n bytes of the answer to c.body.
func (c *conn) read(n int) error {
	start := len(c.body)
	c.body = append(c.body, make([]byte, n)...)
	_, err := io.ReadFull(c.r, c.body[start:])
	return err
}

// readChunks reads a chunked body: chunks of a hexadecimal size line, the
// data and a line break, until a chunk of size 0 and the (empty) trailer.
func (c *conn) readChunks() error {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseInt(string(size), 16, 32)
		if err != nil {
			return fmt.Errorf("chunk size %q", line)
		}
		if n == 0 {
			for {
				trailer, err := c.r.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimSpace(trailer)) == 0 {
					return nil
				}
			}
		}
		if err := c.read(int(n)); err != nil {
			return err
		}
		if _, err := c.r.Discard(2); err != nil { // the chunk's line break
			return err
		}
	}
}
