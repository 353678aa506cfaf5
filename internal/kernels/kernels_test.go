package kernels

import "testing"

func TestLookup(t *testing.T) {
	for _, name := range Names() {
		b, err := Lookup(name)
		if err != nil || b.Name != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, b, err)
		}
		if b.Class != "EEVDF" && b.Class != "CFS" {
			t.Errorf("%s: class %q", name, b.Class)
		}
		if b.PkgLevel != "PKG" && b.PkgLevel != "DIE" {
			t.Errorf("%s: package level %q", name, b.PkgLevel)
		}
	}
	if b, err := Lookup(""); err != nil || b.Name != Default {
		t.Errorf("Lookup(\"\") = %v, %v; want the default %s", b, err, Default)
	}
	if Names()[0] != Default {
		t.Errorf("Names()[0] = %s, want the default first", Names()[0])
	}
	_, err := Lookup("v4.4")
	if err == nil || err.Error() != `unknown kernel "v4.4" (known: v6.19, v6.0, v5.12)` {
		t.Errorf("Lookup(v4.4) error = %v", err)
	}
}

// A returned baseline is a copy: changing it changes no other lookup.
func TestLookupCopies(t *testing.T) {
	b := Must(V619)
	b.SchedstatVersion = 1
	if Must(V619).SchedstatVersion == 1 {
		t.Fatal("Lookup returned the table's own entry")
	}
}
