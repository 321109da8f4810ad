package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/ctxc"

var (
	// repoRoot is the ctxc repository (this module is its deploy/ folder,
	// where go test runs the tests; -trimpath leaves no source path to go by).
	repoRoot = func() string {
		wd, err := os.Getwd()
		if err != nil {
			panic(err)
		}
		return filepath.Dir(wd)
	}()
	// scheme knows every kind the chart and the sidecar manifests may hold;
	// any other kind is an error.
	scheme = func() *kruntime.Scheme {
		s := kruntime.NewScheme()
		for _, add := range []func(*kruntime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme,
			autoscalingv2.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme} {
			if err := add(s); err != nil {
				panic(err)
			}
		}
		return s
	}()
	// strict decodes YAML into the registered types, refusing unknown and
	// duplicate fields.
	strict = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
)

// kubeVersion is the Kubernetes release of the k8s.io/api this module pins
// (v0.37.2 is 1.37.2): helm renders and lints for it, and the objects are
// decoded with its types.
var kubeVersion = func() string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "go.mod"))
	if err != nil {
		panic(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+\.\d+)\s*$`).FindSubmatch(data)
	if m == nil {
		panic("deploy/go.mod does not require k8s.io/api")
	}
	return "1." + string(m[1])
}()

// pinnedKube is kubeVersion as helm's --kube-version parses it.
func pinnedKube(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	kube, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatalf("the Kubernetes release of deploy/go.mod, %q: %v", kubeVersion, err)
	}
	return kube
}

// object is one rendered object with the template it came from.
type object struct {
	source string
	obj    kruntime.Object
}

// decodeStrictly decodes every document of a YAML stream into its API type,
// failing the test on an unknown kind, an unknown or duplicate field, or a
// value of the wrong type.
func decodeStrictly(t *testing.T, name string, stream []byte) []object {
	t.Helper()
	var objects []object
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		source := name
		if _, after, ok := strings.Cut(string(doc), "# Source: "); ok {
			source, _, _ = strings.Cut(after, "\n")
		}
		var fields map[string]any
		if err := yaml.Unmarshal(doc, &fields); err != nil {
			t.Errorf("%s: %v", source, err)
			continue
		}
		if len(fields) == 0 {
			continue // only comments
		}
		obj, _, err := strict.Decode(doc, nil, nil)
		if err != nil {
			t.Errorf("%s: %v", source, err)
			continue
		}
		objects = append(objects, object{source: source, obj: obj})
	}
}

// renderArgs are the `helm template` arguments render's output is the output
// of (with --kube-version kubeVersion), naming it in messages.
func renderArgs(valuesFiles []string, set ...string) string {
	args := []string{"template", "ctxc", chartDir, "--namespace", "agents"}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return strings.Join(args, " ")
}

// render renders the chart as `helm template` with the values files and
// --set pairs (renderArgs), for kubeVersion, and decodes the result
// strictly.
func render(t *testing.T, valuesFiles []string, set ...string) []object {
	t.Helper()
	out, err := helmTemplate("ctxc", chartDir, "agents", pinnedKube(t), valuesFiles, set)
	if err != nil {
		t.Fatalf("helm %s: %v", renderArgs(valuesFiles, set...), err)
	}
	return decodeStrictly(t, renderArgs(valuesFiles, set...), []byte(out))
}

// exampleValues are the documented values files (README, "Deploying").
func exampleValues(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "deploy", chartDir, "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values files: %v", err)
	}
	return files
}

func kinds(objects []object) []string {
	var out []string
	for _, o := range objects {
		out = append(out, o.obj.GetObjectKind().GroupVersionKind().Kind)
	}
	slices.Sort(out)
	return out
}

func find[T kruntime.Object](t *testing.T, objects []object, name string) T {
	t.Helper()
	for _, o := range objects {
		if v, ok := o.obj.(T); ok && (name == "" || strings.Contains(o.source, name)) {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T from a template named %q", zero, name)
	return zero
}

// TestChartLintsAndDecodesStrictly: `helm lint --strict` passes and every
// rendered object decodes strictly, for the default values and for each
// example values file, and each renders the objects its shape needs.
func TestChartLintsAndDecodesStrictly(t *testing.T) {
	want := map[string][]string{
		"default": {"ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service", "Service", "ServiceAccount"},
		"production.yaml": {"ConfigMap", "ConfigMap", "Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget",
			"PrometheusRule", "Service", "Service", "ServiceAccount", "ServiceMonitor"},
		"trusted-network.yaml": {"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "Service", "ServiceAccount"},
	}
	sets := map[string][]string{"default": nil}
	for _, f := range exampleValues(t) {
		sets[filepath.Base(f)] = []string{f}
	}
	for name, files := range sets {
		t.Run(name, func(t *testing.T) {
			if err := helmLintStrict(chartDir, pinnedKube(t), files); err != nil {
				t.Errorf("helm lint --strict %s --values %v: %v", chartDir, files, err)
			}
			objects := render(t, files)
			expected, ok := want[name]
			if !ok {
				t.Fatalf("values file %s: add the objects it renders to this test", name)
			}
			if diff := cmp.Diff(expected, kinds(objects)); diff != "" {
				t.Errorf("kinds rendered (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChartDeployment checks what the default values make of the pod: the
// drain wired to the termination grace period, gRPC health probes, a
// non-root read-only container, limits, and the secrets mounted whole so
// that ctxc's reload of certificates and tokens sees renewals.
func TestChartDeployment(t *testing.T) {
	objects := render(t, nil)
	d := find[*appsv1.Deployment](t, objects, "deployment.yaml")
	pod := d.Spec.Template.Spec
	if got := *pod.TerminationGracePeriodSeconds; got != 5+20+5 {
		t.Errorf("terminationGracePeriodSeconds %d, want drainDelaySeconds 5 + gracePeriodSeconds 20 + 5", got)
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	for k, v := range map[string]string{"CTXC_DRAIN_DELAY": "5s", "CTXC_GRACE_PERIOD": "20s", "CTXC_LISTEN": "0.0.0.0:50051",
		"CTXC_METRICS_LISTEN": "0.0.0.0:9464", "CTXC_AUTH_TOKEN_FILE": "/etc/ctxc/auth/tokens"} {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.GRPC == nil || p.GRPC.Port != 50051 {
			t.Errorf("%s probe %+v, want the kubelet's gRPC probe on 50051", name, p)
		}
	}
	// Readiness must fail inside the drain delay (5s) for the endpoints to drop the pod first.
	if r := c.ReadinessProbe; r.PeriodSeconds*r.FailureThreshold >= 5 {
		t.Errorf("readiness notices NOT_SERVING after %ds, not within the 5s drain delay", r.PeriodSeconds*r.FailureThreshold)
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("security context %+v / %+v, want non-root, read-only root, no privilege escalation", sc, pod.SecurityContext)
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources %+v, want requests and limits", c.Resources)
	}
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" {
			t.Errorf("volume %s mounted with subPath: its updates would never reach the pod", m.Name)
		}
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; ctxc never calls the API server")
	}

	secret := find[*corev1.Secret](t, objects, "secret-auth.yaml")
	if line := secret.StringData["tokens"]; !strings.HasPrefix(line, "default ") || len(strings.TrimSpace(line)) < len("default ")+32 {
		t.Errorf("the token file %q: want a caller named default with a long token", line)
	}
	services := map[string]*corev1.Service{}
	for _, o := range objects {
		if s, ok := o.obj.(*corev1.Service); ok {
			services[s.Name] = s
		}
	}
	if s := services["ctxc"]; s == nil || s.Spec.ClusterIP != "" || s.Spec.Ports[0].AppProtocol == nil || *s.Spec.Ports[0].AppProtocol != "kubernetes.io/h2c" {
		t.Errorf("ClusterIP service %+v, want ctxc with gRPC (h2c) on its port", s)
	}
	if s := services["ctxc-headless"]; s == nil || s.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("headless service %+v, want ctxc-headless with clusterIP None", s)
	}
}

// TestChartWithTLS: the kubelet's gRPC probe speaks plaintext only, so with
// TLS the probes run `ctxc health` in the container, which speaks TLS.
func TestChartWithTLS(t *testing.T) {
	d := find[*appsv1.Deployment](t, render(t, nil, "tls.enabled=true", "tls.secretName=ctxc-tls", "tls.clientCA=true"), "deployment.yaml")
	c := d.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p.Exec == nil || !slices.Equal(p.Exec.Command[:2], []string{"/ctxc", "health"}) || p.GRPC != nil {
			t.Errorf("%s probe %+v, want exec /ctxc health", name, p.ProbeHandler)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["CTXC_TLS_CERT"] != "/etc/ctxc/tls/tls.crt" || env["CTXC_TLS_CLIENT_CA"] != "/etc/ctxc/client-ca/ca.crt" {
		t.Errorf("TLS env %v", env)
	}
}

// unsafeValues are --set pairs that would make a pod that refuses to start,
// or serves in the open unasked, with what the render must fail saying.
func unsafeValues() []struct {
	set  []string
	want string
} {
	return []struct {
		set  []string
		want string
	}{
		{[]string{"auth.enabled=false"}, "needs tls.enabled, auth.enabled, or insecure: true"},
		{[]string{"tls.enabled=true"}, "tls.enabled needs tls.secretName"},
		{[]string{"serverr.log_level=debug"}, "additional properties 'serverr' not allowed"},
	}
}

// TestChartRefusesUnsafeValues: unsafe values stop the render with a message.
func TestChartRefusesUnsafeValues(t *testing.T) {
	for _, tc := range unsafeValues() {
		out, err := helmTemplate("ctxc", chartDir, "default", pinnedKube(t), nil, tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template --set %v: %v, want a failure saying %q:\n%s", tc.set, err, tc.want, out)
		}
	}
}

// TestChartMonitoring: the PrometheusRule holds exactly the promtool-tested
// rules of deploy/prometheus, and the dashboard ConfigMap the dashboard of
// deploy/grafana.
func TestChartMonitoring(t *testing.T) {
	objects := render(t, nil, "metrics.prometheusRule.enabled=true", "metrics.dashboard.enabled=true", "metrics.serviceMonitor.enabled=true")
	rule := find[*monitoringv1.PrometheusRule](t, objects, "prometheusrule.yaml")
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy/prometheus/ctxc-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatalf("deploy/prometheus/ctxc-rules.yaml: %v", err)
	}
	if len(want.Groups) == 0 {
		t.Fatal("deploy/prometheus/ctxc-rules.yaml has no groups")
	}
	if diff := cmp.Diff(want, rule.Spec); diff != "" {
		t.Errorf("PrometheusRule differs from deploy/prometheus/ctxc-rules.yaml (-want +got):\n%s", diff)
	}
	dashboard, err := os.ReadFile(filepath.Join(repoRoot, "deploy/grafana/ctxc.json"))
	if err != nil {
		t.Fatal(err)
	}
	cm := find[*corev1.ConfigMap](t, objects, "dashboard.yaml")
	if got := cm.Data["ctxc.json"]; got != strings.TrimRight(string(dashboard), "\n") || cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v and data (%d bytes) differ from deploy/grafana/ctxc.json (%d bytes)", cm.Labels, len(got), len(dashboard))
	}
	sm := find[*monitoringv1.ServiceMonitor](t, objects, "servicemonitor.yaml")
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "ctxc" {
		t.Errorf("ServiceMonitor spec %+v", sm.Spec)
	}
}

// TestChartConfigLoadsInCtxc: the config file each values set renders is one
// the real ctxc accepts (its decoder refuses unknown keys), with the values'
// profiles in it.
func TestChartConfigLoadsInCtxc(t *testing.T) {
	bin := buildCtxc(t)
	sets := map[string][]string{"default": nil}
	for _, f := range exampleValues(t) {
		sets[filepath.Base(f)] = []string{f}
	}
	for name, files := range sets {
		t.Run(name, func(t *testing.T) {
			cm := find[*corev1.ConfigMap](t, render(t, files), "configmap.yaml")
			config := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(config, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "profiles", "--config", config)
			// The variables the Deployment sets from Secrets.
			cmd.Env = []string{"OPENAI_API_KEY=sk-test", "PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("ctxc profiles --config with the rendered config: %v\n%s\nconfig:\n%s", err, out, cm.Data["config.yaml"])
			}
			var values struct {
				Profiles []struct {
					Name string `json:"name"`
				} `json:"profiles"`
			}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(data, &values); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range values.Profiles {
				if !strings.Contains(string(out), p.Name) {
					t.Errorf("ctxc profiles does not list %s:\n%s", p.Name, out)
				}
			}
		})
	}
}

// TestSidecarManifest: the sidecar manifests decode strictly, and the agent
// Deployment runs ctxc as a native sidecar (an init container that restarts
// always, with a startup probe the agent waits for) that serves the Unix
// socket the agent dials, in a volume both mount.
func TestSidecarManifest(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "kubernetes", "sidecar", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sidecar manifests: %v", err)
	}
	var objects []object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, decodeStrictly(t, filepath.Base(f), data)...)
	}
	d := find[*appsv1.Deployment](t, objects, "agent.yaml")
	pod := d.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("init containers %d, containers %d; want ctxc beside one agent", len(pod.InitContainers), len(pod.Containers))
	}
	ctxc, agent := pod.InitContainers[0], pod.Containers[0]
	if ctxc.RestartPolicy == nil || *ctxc.RestartPolicy != corev1.ContainerRestartPolicyAlways || ctxc.StartupProbe == nil {
		t.Errorf("ctxc restartPolicy %v, startup probe %v: want a native sidecar the agent waits for", ctxc.RestartPolicy, ctxc.StartupProbe)
	}
	listen := ""
	for i, a := range ctxc.Args {
		if a == "--listen" && i+1 < len(ctxc.Args) {
			listen = ctxc.Args[i+1]
		}
	}
	target := ""
	for _, e := range agent.Env {
		if e.Name == "CTXC_TARGET" {
			target = e.Value
		}
	}
	if !strings.HasPrefix(listen, "unix:///") || target != listen {
		t.Errorf("ctxc listens on %q, the agent dials %q; want the same Unix socket", listen, target)
	}
	if !slices.Contains(ctxc.StartupProbe.Exec.Command, listen) {
		t.Errorf("the startup probe %v does not probe %s", ctxc.StartupProbe.Exec.Command, listen)
	}
	socketDir := filepath.Dir(strings.TrimPrefix(listen, "unix://"))
	mounted := func(c corev1.Container) string {
		for _, m := range c.VolumeMounts {
			if m.MountPath == socketDir {
				return m.Name
			}
		}
		return ""
	}
	if v := mounted(ctxc); v == "" || mounted(agent) != v {
		t.Errorf("the socket's folder %s is not one volume mounted in both containers", socketDir)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
		t.Errorf("pod security context %+v: both containers must run as ctxc's uid 65532 to share its socket", sc)
	}
}

var (
	buildOnce sync.Once
	builtCtxc string
	buildErr  error
)

// buildCtxc returns the ctxc binary the pod runs: CTXC_BIN when set (make
// test-deploy passes the ./bin/ctxc that make build made), else this
// repository's, built once per test run with make build's settings, so that
// a cold build cache compiles its modules once for both.
func buildCtxc(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CTXC_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxc-deploy-")
		if err != nil {
			buildErr = err
			return
		}
		builtCtxc = filepath.Join(dir, "ctxc")
		build := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-o", builtCtxc, "./cmd/ctxc")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building ctxc: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtCtxc
}

// TestChartPodStarts runs the real ctxc as the chart's pod would: its
// arguments, its environment, the config file and token file the chart
// mounts (under a temporary folder instead of /etc/ctxc), listening on every
// address as in the pod; it must start, answer health SERVING, and stop
// cleanly on SIGTERM after the drain.
func TestChartPodStarts(t *testing.T) {
	bin := buildCtxc(t)
	for name, files := range map[string][]string{
		"default":              nil,
		"trusted-network.yaml": {filepath.Join(repoRoot, "deploy", chartDir, "examples", "trusted-network.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			objects := render(t, files)
			root := t.TempDir()
			mount := func(path, content string) {
				p := filepath.Join(root, path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mount("config/config.yaml", find[*corev1.ConfigMap](t, objects, "configmap.yaml").Data["config.yaml"])
			for _, o := range objects {
				if s, ok := o.obj.(*corev1.Secret); ok {
					mount("auth/tokens", s.StringData["tokens"])
				}
			}
			c := find[*appsv1.Deployment](t, objects, "deployment.yaml").Spec.Template.Spec.Containers[0]
			local := func(v string) string { return strings.ReplaceAll(v, "/etc/ctxc", root) }
			env := []string{"PATH=" + os.Getenv("PATH")}
			for _, e := range c.Env {
				v := local(e.Value)
				switch e.Name {
				case "CTXC_LISTEN", "CTXC_METRICS_LISTEN", "CTXC_HTTP_LISTEN":
					v = strings.Split(v, ":")[0] + ":0" // every address, as in the pod; a free port
				}
				if e.ValueFrom == nil {
					env = append(env, e.Name+"="+v)
				}
			}
			var args []string
			for _, a := range c.Args {
				args = append(args, local(a))
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			var (
				mu  sync.Mutex
				log strings.Builder
			)
			logs := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
			addr := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					mu.Lock()
					log.WriteString(sc.Text() + "\n")
					mu.Unlock()
					var entry struct{ Msg, Addr string }
					if json.Unmarshal(sc.Bytes(), &entry) == nil && entry.Msg == "serving" {
						addr <- entry.Addr
					}
				}
			}()
			var serving string
			select {
			case serving = <-addr:
			case <-time.After(30 * time.Second):
				t.Fatalf("the pod's ctxc did not start:\n%s", logs())
			}
			_, port, err := net.SplitHostPort(serving)
			if err != nil {
				t.Fatal(err)
			}
			probe := exec.Command(bin, "health", "--addr", "127.0.0.1:"+port)
			if out, err := probe.CombinedOutput(); err != nil || !strings.Contains(string(out), "SERVING") {
				t.Errorf("ctxc health on %s: %v %s", serving, err, out)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("after SIGTERM: %v\n%s", err, logs())
			}
		})
	}
}
