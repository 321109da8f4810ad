package deploy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// The chart is rendered and linted with the packages of the helm that
// deploy/go.mod pins, called as `helm template` and `helm lint --strict` call
// them, rather than by running a helm binary: compiling helm's CLI (its
// cluster client, kubectl's packages, the OCI registry client) took minutes
// of a cold make test. The helmcli tests (make test-helm-cli) run the CLI
// itself and check that it prints what helmTemplate returns.

// helmVersion is the version of helm deploy/go.mod requires.
var helmVersion = func() string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "go.mod"))
	if err != nil {
		panic(err)
	}
	m := regexp.MustCompile(`(?m)^\s*helm\.sh/helm/v3 (v\S+)\s*$`).FindSubmatch(data)
	if m == nil {
		panic("deploy/go.mod does not require helm.sh/helm/v3")
	}
	return string(m[1])
}()

// chartValues merges the values files and --set pairs as helm's --values and
// --set do: each file over the ones before it, maps merged key by key and
// anything else replaced, then each --set pair.
func chartValues(valuesFiles, set []string) (map[string]any, error) {
	vals := map[string]any{}
	for _, f := range valuesFiles {
		file, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, err
		}
		vals = mergeValues(vals, file)
	}
	for _, s := range set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return vals, nil
}

func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if sub, ok := v.(map[string]any); ok {
			if prev, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(prev, sub)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// helmTemplate renders the chart in dir as `helm template release dir
// --namespace namespace --kube-version kube` with those values files
// and --set pairs does (no cluster: lookup finds nothing), and returns what
// it prints: every manifest in helm's install order under a `# Source:`
// line, then the hooks. Its errors are helm's: the values schema, the
// chart's kubeVersion, a template's fail or parse error.
func helmTemplate(release, dir, namespace string, kube *chartutil.KubeVersion, valuesFiles, set []string) (string, error) {
	vals, err := chartValues(valuesFiles, set)
	if err != nil {
		return "", err
	}
	chrt, err := loader.Load(dir)
	if err != nil {
		return "", err
	}
	if t := chrt.Metadata.Type; t != "" && t != "application" {
		return "", fmt.Errorf("%s charts are not installable", t)
	}
	// helm template stops on a dependency of Chart.yaml missing from charts/.
	var missing []string
	for _, req := range chrt.Metadata.Dependencies {
		if !chartHasDependency(chrt.Dependencies(), req.Name) {
			missing = append(missing, req.Name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, vals); err != nil {
		return "", err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kube
	// .Capabilities.HelmVersion.Version as make helm stamps it: the module's
	// version (unstamped helm says only its minor release, v3.22).
	caps.HelmVersion.Version = helmVersion
	options := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	// The values schema (values.schema.json) is checked here.
	values, err := chartutil.ToRenderValues(chrt, vals, options, caps)
	if err != nil {
		return "", err
	}
	if c := chrt.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, caps.KubeVersion.String()) {
		return "", fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c, caps.KubeVersion.String())
	}
	files, err := engine.Engine{}.Render(chrt, values)
	if err != nil {
		return "", err
	}
	for name := range files {
		if path.Base(name) == "NOTES.txt" { // the install's notes, not a manifest
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	text := strings.TrimSpace(out.String()) + "\n"
	for _, h := range hooks {
		text += fmt.Sprintf("---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return text, nil
}

func chartHasDependency(deps []*chart.Chart, name string) bool {
	for _, d := range deps {
		if d.Name() == name {
			return true
		}
	}
	return false
}

// helmLintStrict lints the chart in dir as `helm lint --strict dir
// --kube-version kube` with those values files does (in the namespace
// default, helm's without a kubeconfig): every rule of helm's linter, and
// any warning or error fails it.
func helmLintStrict(dir string, kube *chartutil.KubeVersion, valuesFiles []string) error {
	vals, err := chartValues(valuesFiles, nil)
	if err != nil {
		return err
	}
	linter := lint.AllWithKubeVersion(dir, vals, "default", kube)
	var errs []error
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			errs = append(errs, m)
		}
	}
	return errors.Join(errs...)
}
