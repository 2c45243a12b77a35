// Runs the Argo CD health checks in deploy/argocd/health/ against their fixtures (health_test.yaml, Argo CD's
// format), in a gopher-lua VM set up the way Argo CD sets one up for a health customization from argocd-cm
// (util/lua in argo-cd): no standard libraries except package, base, table and a reduced os; a one-second
// deadline; the object decoded as the controller holds it (integers as int64, floats, strings, bools,
// arrays and maps as tables); the returned table encoded to JSON and read as {status, message}, with a status
// outside Argo CD's set turned into Unknown.
//
// Also checks that the argocd-cm patch (deploy/argocd/argocd-cm.yaml) carries exactly these scripts under
// resource.customizations.health.<group>_<kind>, so what users install is what was tested.
//
// Usage: go run . [health dir] [argocd-cm.yaml]   (from test/argocd; defaults to the repository's)
// Prints one line per fixture and ends with "argocd-health: N passed, N failed"; exits 1 when any failed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
	"sigs.k8s.io/yaml"
)

// healthStatus is Argo CD's health.HealthStatus as a script returns it.
type healthStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

type fixtures struct {
	Tests []struct {
		HealthStatus healthStatus `json:"healthStatus"`
		InputPath    string       `json:"inputPath"`
	} `json:"tests"`
}

// Argo CD's health status codes; anything else from a script becomes Unknown.
var validStatus = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true,
}

// The os functions Argo CD's safe os library keeps: reading the clock, nothing that touches the system.
var safeOs = []string{"clock", "date", "difftime", "time"}

func newVM() (*lua.LState, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, lua.OpenOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			l.Close()
			return nil, err
		}
	}
	full, ok := l.GetGlobal(lua.OsLibName).(*lua.LTable)
	if !ok {
		l.Close()
		return nil, errors.New("os library did not load")
	}
	reduced := l.NewTable()
	for _, name := range safeOs {
		reduced.RawSetString(name, full.RawGetString(name))
	}
	l.SetGlobal(lua.OsLibName, reduced)
	return l, nil
}

// toLua converts a decoded JSON value the way Argo CD hands an unstructured object to Lua.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, item := range x {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetH(lua.LString(k), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// numbers turns json.Number into int64 when integral, else float64: what the apiserver's JSON decoding gives
// the controller's unstructured objects.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

func readObject(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return numbers(obj).(map[string]any), nil
}

func health(script string, obj map[string]any) (healthStatus, error) {
	l, err := newVM()
	if err != nil {
		return healthStatus{}, err
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return healthStatus{}, err
	}
	ret := l.Get(-1)
	if ret.Type() != lua.LTTable {
		return healthStatus{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	js, err := luajson.Encode(ret)
	if err != nil {
		return healthStatus{}, err
	}
	var hs healthStatus
	if err := json.Unmarshal(js, &hs); err != nil {
		return healthStatus{}, err
	}
	if !validStatus[hs.Status] {
		return healthStatus{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return hs, nil
}

// configMapScripts reads resource.customizations.health.<group>_<kind> entries from the argocd-cm patch.
func configMapScripts(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]string{}
	for k, v := range cm.Data {
		if key, ok := strings.CutPrefix(k, "resource.customizations.health."); ok {
			out[key] = v
		}
	}
	return out, nil
}

func main() {
	dir := "../../deploy/argocd/health"
	cmPath := "../../deploy/argocd/argocd-cm.yaml"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if len(os.Args) > 2 {
		cmPath = os.Args[2]
	}
	passed, failed := 0, 0
	fail := func(format string, args ...any) {
		failed++
		fmt.Printf("FAIL "+format+"\n", args...)
	}
	inConfigMap, err := configMapScripts(cmPath)
	if err != nil {
		fail("%v", err)
	}
	scripts, _ := filepath.Glob(filepath.Join(dir, "*", "*", "health.lua"))
	sort.Strings(scripts)
	if len(scripts) == 0 {
		fail("no health.lua under %s", dir)
	}
	for _, scriptPath := range scripts {
		kindDir := filepath.Dir(scriptPath)
		key := filepath.Base(filepath.Dir(kindDir)) + "_" + filepath.Base(kindDir)
		scriptBytes, err := os.ReadFile(scriptPath)
		if err != nil {
			fail("%v", err)
			continue
		}
		script := string(scriptBytes)
		if inConfigMap[key] == script {
			passed++
			fmt.Printf("ok   %s: argocd-cm carries resource.customizations.health.%s unchanged\n", cmPath, key)
		} else {
			fail("%s: resource.customizations.health.%s differs from %s (or is missing)", cmPath, key, scriptPath)
		}
		delete(inConfigMap, key)
		raw, err := os.ReadFile(filepath.Join(kindDir, "health_test.yaml"))
		if err != nil {
			fail("%v", err)
			continue
		}
		var fx fixtures
		if err := yaml.UnmarshalStrict(raw, &fx); err != nil {
			fail("%s: %v", filepath.Join(kindDir, "health_test.yaml"), err)
			continue
		}
		if len(fx.Tests) == 0 {
			fail("%s: no tests", filepath.Join(kindDir, "health_test.yaml"))
		}
		for _, t := range fx.Tests {
			name := fmt.Sprintf("%s %s", key, t.InputPath)
			obj, err := readObject(filepath.Join(kindDir, t.InputPath))
			if err != nil {
				fail("%s: %v", name, err)
				continue
			}
			got, err := health(script, obj)
			if err != nil {
				fail("%s: %v", name, err)
				continue
			}
			if got != t.HealthStatus {
				fail("%s:\n  want %s %q\n  got  %s %q", name, t.HealthStatus.Status, t.HealthStatus.Message, got.Status, got.Message)
				continue
			}
			passed++
			fmt.Printf("ok   %s: %s\n", name, got.Status)
		}
	}
	for key := range inConfigMap {
		fail("%s: resource.customizations.health.%s has no health.lua and fixtures under %s", cmPath, key, dir)
	}
	fmt.Printf("argocd-health: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
