package topology

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// A fake sysfs tree as one text, for the fuzzer: "-- PATH --" lines start
// each file, whose contents are the lines up to the next one (as txtar).
// PATH is relative to where /sys is mounted.

func encodeTree(files map[string]string) []byte {
	var b bytes.Buffer
	for _, name := range sortedKeys(files) {
		b.WriteString("-- " + name + " --\n" + files[name])
		if !strings.HasSuffix(files[name], "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sysTree is a MapFS that answers for a missing file at once: MapFS.Open
// scans every file to synthesise directories, which makes a tree claiming
// thousands of online CPUs take seconds where /sys takes milliseconds.
type sysTree struct {
	files fstest.MapFS
	dirs  map[string]bool
}

func (t sysTree) Open(name string) (fs.File, error) {
	if _, ok := t.files[name]; !ok && !t.dirs[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return t.files.Open(name)
}

func newSysTree(files fstest.MapFS) sysTree {
	t := sysTree{files: files, dirs: map[string]bool{".": true}}
	for name := range files {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			t.dirs[d] = true
		}
	}
	return t
}

func decodeTree(data []byte) fstest.MapFS {
	fsys := fstest.MapFS{}
	var name string
	var body strings.Builder
	flush := func() {
		// Paths fs.FS cannot name would only test fstest.
		if name != "" && fs.ValidPath(name) && name != "." {
			fsys[name] = &fstest.MapFile{Data: []byte(body.String()), Mode: 0o444}
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if l := strings.TrimSuffix(line, "\n"); strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) >= 6 {
			flush()
			name = strings.TrimSpace(l[3 : len(l)-3])
			continue
		}
		body.WriteString(line)
	}
	flush()
	return fsys
}

func treeFiles(t testing.TB, dir string) map[string]string {
	files := map[string]string{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		files[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The encoding carries a tree over unchanged: the fake trees of testdata
// read the same through it.
func TestSysfsTreeEncoding(t *testing.T) {
	for _, name := range []string{"hikey960", "x86-2s"} {
		dir := filepath.Join("testdata", "sysfs", name)
		want, err := ReadSysfs(os.DirFS(dir), ArchX86)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadSysfs(newSysTree(decodeTree(encodeTree(treeFiles(t, dir)))), ArchX86)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s through the encoding: %v\n got %+v\nwant %+v", name, err, got, want)
		}
	}
}

// FuzzReadSysfs: the /sys reader never panics on any tree; its errors are
// one line starting "sysfs: "; a tree it accepts gives a valid spec that
// builds and that a machine file written from it loads back unchanged (so
// machine show --yaml host works on whatever /sys holds).
func FuzzReadSysfs(f *testing.F) {
	for _, name := range []string{"hikey960", "x86-2s"} {
		f.Add(encodeTree(treeFiles(f, filepath.Join("testdata", "sysfs", name))), false)
	}
	const cpu0 = "devices/system/cpu/cpu0/"
	f.Add(encodeTree(map[string]string{"devices/system/cpu/online": "0-3\n"}), true)
	f.Add(encodeTree(map[string]string{"devices/system/cpu/online": "0-1,3\n"}), false)
	f.Add(encodeTree(map[string]string{
		"devices/system/cpu/online":                       "0-1\n",
		cpu0 + "topology/thread_siblings_list":            "0-1\n",
		cpu0 + "topology/physical_package_id":             "-1\n",
		cpu0 + "cpu_capacity":                             "512\n",
		cpu0 + "cpufreq/related_cpus":                     "0 1\n",
		cpu0 + "cpufreq/cpuinfo_max_freq":                 "2400000\n",
		cpu0 + "cpuidle/state0/name":                      "WFI\n",
		cpu0 + "cpuidle/state0/latency":                   "1\n",
		cpu0 + "cpuidle/state0/residency":                 "1\n",
		cpu0 + "cache/index3/level":                       "3\n",
		cpu0 + "cache/index3/type":                        "Unified\n",
		cpu0 + "cache/index3/shared_cpu_list":             "0-1\n",
		"devices/system/node/online":                      "0,2\n",
		"devices/system/node/node0/cpulist":               "0\n",
		"devices/system/node/node0/distance":              "10 20\n",
		"devices/system/node/node2/cpulist":               "1\n",
		"devices/system/node/node2/distance":              "20 10\n",
		"devices/system/cpu/cpu1/cpu_capacity":            "1024\n",
		"devices/system/cpu/cpu1/topology/core_cpus_list": "0-1\n",
	}), true)
	f.Fuzz(func(t *testing.T, data []byte, arm bool) {
		arch := ArchX86
		if arm {
			arch = ArchARM64
		}
		s, err := ReadSysfs(newSysTree(decodeTree(data)), arch)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "sysfs: ") || strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "%!") {
				t.Fatalf("unclear error %q", msg)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted tree gives an invalid spec: %v", err)
		}
		var out bytes.Buffer
		if err := WriteYAML(&out, s); err != nil {
			t.Fatalf("accepted tree cannot be written as a machine file: %v", err)
		}
		again, err := ParseYAML("host.yaml", out.Bytes())
		if err != nil {
			t.Fatalf("machine file of an accepted tree does not load: %v\n%s", err, out.Bytes())
		}
		if g, w := specForCompare(again), specForCompare(s); !reflect.DeepEqual(g, w) {
			t.Fatalf("machine file of an accepted tree loads as another spec:\n%s\n%s", specDiff(g, w), out.Bytes())
		}
		if len(s.CPUs) > 512 {
			return
		}
		if _, err := Build(s, Options{}); err != nil {
			t.Fatalf("accepted tree does not build: %v", err)
		}
	})
}

// Values out of their range are errors naming the file, not clamped or
// wrapped: before, a cpu_capacity of -5 became capacity 1, a huge latency
// overflowed, and a name that is not UTF-8 gave a spec no machine file
// could hold.
func TestSysfsBadValues(t *testing.T) {
	const st = "devices/system/cpu/cpu0/cpuidle/state0/"
	for _, tc := range []struct{ file, value, want string }{
		{"devices/system/cpu/cpu0/cpu_capacity", "-5", "sysfs: devices/system/cpu/cpu0/cpu_capacity: -5 is not a capacity (1..1024)"},
		{"devices/system/cpu/cpu0/cpu_capacity", "0", "sysfs: devices/system/cpu/cpu0/cpu_capacity: 0 is not a capacity (1..1024)"},
		{"devices/system/cpu/cpu0/cpu_capacity", "9223372036854775807", "sysfs: devices/system/cpu/cpu0/cpu_capacity: 9223372036854775807 is not a capacity (1..1024)"},
		{st + "latency", "9223372036854775807", "sysfs: " + st + "latency: 9223372036854775807 is not a latency in us (0..1000000000)"},
		{st + "residency", "-3", "sysfs: " + st + "residency: -3 is not a residency in us (0..1000000000)"},
		{st + "name", "W\xffI", `sysfs: ` + st + `name: "W\xffI" is not an idle state name`},
		{st + "name", "", `sysfs: ` + st + `name: "" is not an idle state name`},
		{"devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "-1", "sysfs: devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq: -1 is not a frequency in kHz (0..1000000000)"},
		{"devices/system/node/node0/distance", "10 300", "sysfs: devices/system/node/node0/distance: the distance to node 1 is 300; it must be 10 to itself, 11..254 to others"},
		{"devices/system/node/node1/distance", "12 10", "sysfs: distance matrix is not symmetric: [0][1]=20 but [1][0]=12"},
	} {
		t.Run(tc.file+"="+tc.value, func(t *testing.T) {
			files := map[string]string{
				"devices/system/cpu/online":          "0-1\n",
				st + "name":                          "WFI\n",
				st + "latency":                       "1\n",
				st + "residency":                     "1\n",
				"devices/system/node/online":         "0-1\n",
				"devices/system/node/node0/cpulist":  "0\n",
				"devices/system/node/node0/distance": "10 20\n",
				"devices/system/node/node1/cpulist":  "1\n",
				"devices/system/node/node1/distance": "20 10\n",
			}
			if _, err := ReadSysfs(newSysTree(decodeTree(encodeTree(files))), ArchX86); err != nil {
				t.Fatalf("the tree without the bad value: %v", err)
			}
			files[tc.file] = tc.value + "\n"
			_, err := ReadSysfs(newSysTree(decodeTree(encodeTree(files))), ArchX86)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
