package projections

import "strings"

// symbol numbers a string an index repeats (see symbols); 0 is "".
type symbol uint32

// symbols are the strings an index repeats, each kept once and named by
// its number. The audit log's are actions, resources, actors,
// organisations, field names, and the ids of aggregates (see auditKey):
// as many as there are actors, organisations, fields and aggregates, not
// events. The delivery log's are subscriptions, event names, outcomes
// and errors (see deliveryLine). Symbols are never let go: entries keep
// their numbers.
type symbols struct {
	names   []string
	numbers map[string]symbol
}

func newSymbols() symbols { return symbols{names: []string{""}, numbers: map[string]symbol{"": 0}} }

// number is the symbol of name, made the first time name is seen.
func (s *symbols) number(name string) symbol {
	if n, ok := s.numbers[name]; ok {
		return n
	}
	n := symbol(len(s.names))
	name = strings.Clone(name) // not a slice of an event
	s.names = append(s.names, name)
	s.numbers[name] = n
	return n
}

// numberOf is number(string(name)), which copies name only the first
// time.
func (s *symbols) numberOf(name []byte) symbol {
	if n, ok := s.numbers[string(name)]; ok {
		return n
	}
	return s.number(string(name))
}

// textOf is the symbol of a member's text (see jsonMember.text).
func (s *symbols) textOf(mem jsonMember) symbol {
	if mem.plain {
		return s.numberOf(mem.value[1 : len(mem.value)-1])
	}
	return s.number(mem.text())
}

// find is the symbol of name, if it has one: a filter naming a string
// without one matches no entry.
func (s *symbols) find(name string) (symbol, bool) {
	n, ok := s.numbers[name]
	return n, ok
}

func (s *symbols) name(n symbol) string { return s.names[n] }

// restored numbers the names again, after a snapshot restored them.
func (s *symbols) restored() {
	s.numbers = make(map[string]symbol, len(s.names))
	for i, name := range s.names {
		s.numbers[name] = symbol(i)
	}
}
