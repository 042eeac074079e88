package main

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/config"
	"github.com/cargostream/cargostream/tokens"
	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// The compose file is checked with the compose-spec loader, the one docker
// compose uses, so that CI catches a broken file without Docker.

var natsNodes = []string{"nats-1", "nats-2", "nats-3"}

const loadBalancer = "lb"

// loadCompose loads ../../docker-compose.yml as docker compose would, with
// an empty environment so that the test does not depend on the caller's.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join("..", "..", "docker-compose.yml")}, cli.WithEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(t.Context())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return project
}

func TestComposeFile(t *testing.T) {
	t.Parallel()
	project := loadCompose(t)
	service := func(t *testing.T, name string) types.ServiceConfig {
		t.Helper()
		s, ok := project.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		return s
	}

	t.Run("it has three NATS nodes, two or more cargod replicas and a load balancer", func(t *testing.T) {
		var names []string
		for name := range project.Services {
			names = append(names, name)
		}
		slices.Sort(names)
		if want := append(slices.Clone(natsNodes), "cargod", loadBalancer); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
			t.Errorf("services %v, want %v", names, want)
		}
		cargod := service(t, "cargod")
		replicas := 1
		if cargod.Deploy != nil && cargod.Deploy.Replicas != nil {
			replicas = *cargod.Deploy.Replicas
		}
		if replicas < 2 {
			t.Errorf("cargod runs %d replicas, want 2 or more", replicas)
		}
		if cargod.Build == nil || cargod.Build.Dockerfile != "Dockerfile" {
			t.Errorf("cargod build %+v, want the top-level Dockerfile", cargod.Build)
		}
	})

	t.Run("every service has a health check and restarts", func(t *testing.T) {
		for name, s := range project.Services {
			if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) < 2 || s.HealthCheck.Test[0] != "CMD" {
				t.Errorf("%s: health check %+v, want a command", name, s.HealthCheck)
			}
			if s.Restart != types.RestartPolicyUnlessStopped {
				t.Errorf("%s: restart %q, want %q", name, s.Restart, types.RestartPolicyUnlessStopped)
			}
		}
	})

	t.Run("the NATS image is 2.12 or later, which has atomic batch publish", func(t *testing.T) {
		for _, name := range natsNodes {
			image := service(t, name).Image
			m := regexp.MustCompile(`^nats:(\d+)\.(\d+)`).FindStringSubmatch(image)
			if m == nil {
				t.Errorf("%s: image %q, want nats:<major>.<minor>…", name, image)
				continue
			}
			major, _ := strconv.Atoi(m[1])
			minor, _ := strconv.Atoi(m[2])
			if major < 2 || major == 2 && minor < 12 {
				t.Errorf("%s: image %q is older than nats 2.12", name, image)
			}
		}
	})

	t.Run("each NATS node runs JetStream on a named volume with routes to the other two", func(t *testing.T) {
		for _, name := range natsNodes {
			s := service(t, name)
			flags := flagValues(s.Command)
			if _, ok := flags["--jetstream"]; !ok {
				t.Errorf("%s: command %v lacks --jetstream", name, s.Command)
			}
			if flags["--name"] != name || flags["--cluster_name"] == "" || flags["--cluster"] != "nats://0.0.0.0:6222" {
				t.Errorf("%s: command %v, want --name %s, a --cluster_name and --cluster nats://0.0.0.0:6222", name, s.Command, name)
			}
			var want []string
			for _, other := range natsNodes {
				if other != name {
					want = append(want, "nats://"+other+":6222")
				}
			}
			if got := strings.Split(flags["--routes"], ","); !slices.Equal(got, want) {
				t.Errorf("%s: routes %v, want %v", name, got, want)
			}
			store := flags["--store_dir"]
			if len(s.Volumes) != 1 || s.Volumes[0].Type != types.VolumeTypeVolume || s.Volumes[0].Target != store {
				t.Errorf("%s: volumes %+v, want one named volume on the store dir %q", name, s.Volumes, store)
			} else if _, ok := project.Volumes[s.Volumes[0].Source]; !ok {
				t.Errorf("%s: volume %q is not declared", name, s.Volumes[0].Source)
			}
		}
	})

	t.Run("cargod starts after every NATS node is healthy, and the load balancer after cargod", func(t *testing.T) {
		for service, deps := range map[string][]string{"cargod": natsNodes, loadBalancer: {"cargod"}} {
			for _, dep := range deps {
				if got := project.Services[service].DependsOn[dep].Condition; got != types.ServiceConditionHealthy {
					t.Errorf("%s depends on %s with condition %q, want %q", service, dep, got, types.ServiceConditionHealthy)
				}
			}
		}
	})

	t.Run("cargod's environment is read by config as an external cluster of three nodes, demo off", func(t *testing.T) {
		env := service(t, "cargod").Environment
		var help bytes.Buffer
		if _, err := config.Load([]string{"--help"}, func(string) string { return "" }, &help); err != config.ErrHelp {
			t.Fatal(err)
		}
		for name := range env {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).Match(help.Bytes()) {
				t.Errorf("%s is not a setting of cargod", name)
			}
		}
		// The secret files exist only in the containers: a stand-in is
		// read, 32 bytes in base64 as the webhook key must be, and a PEM
		// key for the signing key.
		standIn := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(standIn, []byte("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="), 0o600); err != nil {
			t.Fatal(err)
		}
		keyStandIn := filepath.Join(t.TempDir(), "signing_key")
		key, _ := tokens.GenerateSigningKey()
		if err := os.WriteFile(keyStandIn, key, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(nil, func(k string) string {
			v := env[k]
			switch {
			case v == nil:
				return ""
			case k == "CARGO_SIGNING_KEY_FILE":
				return keyStandIn
			case strings.HasSuffix(k, "_FILE"):
				return standIn
			}
			return *v
		}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, node := range natsNodes {
			if !strings.Contains(cfg.NATSURL, "nats://"+node+":4222") {
				t.Errorf("CARGO_NATS_URL %q does not name %s", cfg.NATSURL, node)
			}
		}
		if cfg.NATSReplicas != 3 || cfg.Demo {
			t.Errorf("replicas %d, demo %t; want 3 and false", cfg.NATSReplicas, cfg.Demo)
		}
		if cfg.AdminSecret == "" || cfg.SigningKey == "" || len(cfg.WebhookKey) == 0 {
			t.Errorf("admin secret, signing key or webhook key not set")
		}
	})

	t.Run("secrets come from files mounted where cargod's _FILE settings look", func(t *testing.T) {
		cargod := service(t, "cargod")
		mounted := map[string]bool{}
		for _, s := range cargod.Secrets {
			mounted[s.Target] = true // the loader makes it /run/secrets/<name>
			if f := project.Secrets[s.Source].File; f == "" {
				t.Errorf("secret %s is not from a file", s.Source)
			}
		}
		files := 0
		for name, v := range cargod.Environment {
			if strings.HasSuffix(name, "_FILE") {
				files++
				if v == nil || !mounted[*v] {
					t.Errorf("%s does not name a mounted secret (mounted: %v)", name, mounted)
				}
			} else if strings.Contains(name, "SECRET") || strings.Contains(name, "KEY") {
				t.Errorf("%s is set in the environment, not from a file", name)
			}
		}
		if files == 0 {
			t.Error("no setting of cargod comes from a file")
		}
	})

	t.Run("only the load balancer publishes a port, and only on loopback", func(t *testing.T) {
		for name, s := range project.Services {
			if name != loadBalancer && len(s.Ports) > 0 {
				t.Errorf("%s publishes %+v", name, s.Ports)
			}
		}
		ports := service(t, loadBalancer).Ports
		if len(ports) != 1 || ports[0].HostIP != "127.0.0.1" {
			t.Errorf("load balancer publishes %+v, want one port on 127.0.0.1", ports)
		}
	})

	// Else every client is the load balancer, and all tenants share the
	// rate limits of one address.
	t.Run("cargod trusts the load balancer's fixed address alone to name the client", func(t *testing.T) {
		lb := service(t, loadBalancer).Networks["default"]
		if lb == nil || lb.Ipv4Address == "" {
			t.Fatal("the load balancer has no fixed address on the default network")
		}
		trusted := service(t, "cargod").Environment["CARGO_TRUSTED_PROXIES"]
		if trusted == nil || *trusted != lb.Ipv4Address {
			t.Errorf("CARGO_TRUSTED_PROXIES = %v, want the load balancer's %s", trusted, lb.Ipv4Address)
		}
		ipam := project.Networks["default"].Ipam.Config
		if len(ipam) != 1 {
			t.Fatalf("the default network's address pools: %+v, want one", ipam)
		}
		address := netip.MustParseAddr(lb.Ipv4Address)
		subnet, err := netip.ParsePrefix(ipam[0].Subnet)
		if err != nil || !subnet.Contains(address) {
			t.Errorf("the load balancer's %s is not in the subnet %q (%v)", address, ipam[0].Subnet, err)
		}
		given, err := netip.ParsePrefix(ipam[0].IPRange)
		if err != nil || given.Contains(address) || !subnet.Contains(given.Addr()) {
			t.Errorf("the range other containers are given addresses from, %q, must be in the subnet and leave out %s (%v)", ipam[0].IPRange, address, err)
		}
	})

	t.Run("the load balancer sends requests to every cargod replica", func(t *testing.T) {
		lb := service(t, loadBalancer)
		if len(lb.Configs) != 1 {
			t.Fatalf("load balancer configs %+v, want one", lb.Configs)
		}
		conf := project.Configs[lb.Configs[0].Source].Content
		for _, want := range []string{"server cargod:8080 resolve;", "proxy_pass http://cargod;", "resolver 127.0.0.11",
			// Compose reads "$$" as "$": nginx gets its variable.
			"proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"} {
			if !strings.Contains(conf, want) {
				t.Errorf("nginx config lacks %q:\n%s", want, conf)
			}
		}
	})
}

// flagValues maps the flags of a command to their values ("" for a flag
// followed by another flag).
func flagValues(command []string) map[string]string {
	flags := map[string]string{}
	for i, arg := range command {
		if !strings.HasPrefix(arg, "--") {
			continue
		}
		flags[arg] = ""
		if i+1 < len(command) && !strings.HasPrefix(command[i+1], "--") {
			flags[arg] = command[i+1]
		}
	}
	return flags
}
