package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// declared parses this package's sources, without its tests, and returns
// the names of the types that have a method called method, and of the
// constants whose names begin with prefix.
func declared(t *testing.T, method, prefix string) (types, consts []string) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), entry.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == method {
					types = append(types, d.Recv.List[0].Type.(*ast.Ident).Name)
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(name.Name, prefix) {
							consts = append(consts, name.Name)
						}
					}
				}
			}
		}
	}
	return types, consts
}

func TestEveryEventTypeIsRegisteredOnceAndDecodesToItself(t *testing.T) {
	events, _ := declared(t, "EventType", "")
	var registered []string
	for name, decode := range decoders {
		e, err := decode([]byte("{}"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.EventType() != name {
			t.Errorf("the decoder of %q makes a %T, whose type is %q", name, e, e.EventType())
		}
		registered = append(registered, reflect.TypeOf(e).Name())
	}
	slices.Sort(events)
	slices.Sort(registered)
	if !slices.Equal(events, registered) {
		t.Errorf("events declared %v\nevents registered %v", events, registered)
	}
}

func TestEveryAggregateTypeIsListedOnce(t *testing.T) {
	_, consts := declared(t, "", "Aggregate")
	if len(consts) != len(AggregateTypes) {
		t.Errorf("%d aggregate type constants, %d listed in AggregateTypes", len(consts), len(AggregateTypes))
	}
	seen := map[string]bool{}
	for _, a := range AggregateTypes {
		if seen[a] {
			t.Errorf("aggregate type %q listed twice", a)
		}
		seen[a] = true
	}
}
