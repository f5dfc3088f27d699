// Package cli is troco's command line: `serve` and the administration commands of CONTRACT 1.
// Every flag can also be given as TROCO_<FLAG> in the environment.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// Env is the process environment the CLI reads (os.Getenv in production).
type Env struct {
	Args   []string
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Schema is the contents of schema.sql, PostgresSchema of schema_postgres.sql.
	Schema, PostgresSchema string
	// Ready, when set, receives the HTTPS address once `serve` is listening (tests).
	Ready func(addr string)
}

// synopses are the usage lines of every command, printed by `troco -h`, by `troco <group> -h`
// and at the top of each command's own -h.
var synopses = []struct{ name, line string }{
	{"serve", "troco serve [flags]                      run the HTTPS server (test key printed at the first start)"},
	{"version", "troco version                            print the version"},
	{"backup", "troco backup --to FILE [--data-dir D] [--db F]\n                       consistent online backup (database, master key, uploaded files), also while serve runs"},
	{"restore", "troco restore --from FILE [--data-dir D] [--db F] [--force]\n                       check a backup and restore it (serve on that database must be stopped)"},
	{"migrate", "troco migrate [--db F|postgres://…] [--json]   apply pending migrations and print the schema version"},
	{"export", "troco export --to FILE [--db F]         write every table to a file (to move a SQLite database to PostgreSQL)"},
	{"import", "troco import --from FILE --db postgres://… [--replace]\n                       load an export into a new database (ids, cursors and sequences kept)"},
	{"org create", "troco org create --name N [--display-name D] [--document D] [--platform] [--connected-to plat_…] [--activation-status S] [--json]"},
	{"org update", "troco org update org_… [--display-name D] [--name N] [--json]   the name buyers see on checkout, PIX and boleto"},
	{"org set-status", "troco org set-status org_… --status active|disabled|in_review|not_submitted [--env live|test|both]\n                       [--disabled-reason R] [--missing a,b] [--json]   record a review (emits organization.updated)"},
	{"platform configure", "troco platform configure plat_… --split-rules '{\"default\":{\"rate\":150,\"fixed\":50}}' [--json]\n                       the platform's share of its connected organizations' payments (see -h)"},
	{"key create", "troco key create --org org_… [--env live|test] [--scopes read,write|admin|platform_admin] [--name N] [--expires-at RFC3339] [--json]\n                       the default environment is live: pass --env test for a sandbox key"},
	{"key revoke", "troco key revoke key_… [--reason R] [--by WHO] [--json]"},
	{"key list", "troco key list --org org_… [--json]"},
	{"tokens rotate-key", "troco tokens rotate-key [--data-dir D]   new signing key for /api/v1 access tokens\n                       (the previous one stays valid for the tokens it signed, one hour)"},
	{"user create", "troco user create --org org_… --email E --role owner|admin|developer|viewer [--by WHO] [--base-url U] [--json]\n                       add a dashboard user; prints a one-time sign-in link (15 min)"},
	{"user signin-link", "troco user signin-link user_… [--base-url U] [--json]   a new one-time sign-in link for a user"},
	{"user remove", "troco user remove user_… [--by WHO] [--json]   remove a person from their organization (not its last owner);\n                       their dashboard sessions end at once"},
	{"events tail", "troco events tail [--org org_…] [--env test|live] [--type T|prefix.*] [--json]\n                       follow new events live, like a log (Ctrl-C to stop)"},
	{"processors check", "troco processors check [live processor flags]\n                       verify the live processors' credentials with the providers"},
	{"dev psp", "troco dev psp [--dir D] [--cielo] [--troco-ca F]\n                       run doubles of a PSP's API Pix (and Cielo) on loopback and print the serve flags to try live mode locally"},
	{"trigger", "troco trigger <event-type> [--org org_…] [--wait 10s] [--base-url U] [--data-dir D] [--sim-delay 3m] [--json]\n                       create test-mode objects that emit the event and show the deliveries of a running serve"},
}

// usageOf is the usage of the commands whose name starts with prefix ("" for all).
func usageOf(prefix string) string {
	var b strings.Builder
	b.WriteString("troco: a payments platform for Brazil and its own sandbox.\n\nUsage:\n")
	for _, s := range synopses {
		if prefix == "" || s.name == prefix || strings.HasPrefix(s.name, prefix+" ") {
			b.WriteString("  " + s.line + "\n")
		}
	}
	b.WriteString(`
Administration commands take --db (TROCO_DB) and --json, and work while serve runs; they use the
base URL, simulated delay and data directory that serve recorded in the database.
Every command answers -h with its flags (troco serve -h, troco key create -h, …).
`)
	return b.String()
}

var usage = usageOf("")

// Run executes the command line in env.Args (without the program name).
func Run(ctx context.Context, env Env) error {
	args := env.Args
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return errors.New("no command")
	}
	err := dispatch(ctx, env, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h printed the usage; asking for help is not a failure
	}
	return err
}

func dispatch(ctx context.Context, env Env, args []string) error {
	commands := map[string]func(context.Context, Env, []string) error{
		"serve": serve, "trigger": triggerEvent, "version": version, "backup": backupCmd, "restore": restoreCmd,
		"org set-status": orgSetStatus, "org create": orgCreate, "org update": orgUpdate,
		"platform configure": platformConfigure,
		"key create":         keyCreate, "key revoke": keyRevoke, "key list": keyList,
		"user create": userCreate, "user signin-link": userSigninLink, "user remove": userRemove,
		"events tail": eventsTail, "processors check": processorsCheck, "dev psp": devPSP,
		"tokens rotate-key": tokensRotateKey,
		"migrate":           migrateCmd, "export": exportCmd, "import": importCmd,
	}
	if fn, ok := commands[args[0]]; ok {
		return fn(ctx, env, args[1:])
	}
	if len(args) > 1 {
		if fn, ok := commands[args[0]+" "+args[1]]; ok {
			return fn(ctx, env, args[2:])
		}
	}
	isHelp := func(a string) bool { return a == "help" || a == "-h" || a == "--help" || a == "-help" }
	switch {
	case isHelp(args[0]) && len(args) == 1:
		fmt.Fprint(env.Stdout, usage)
		return nil
	case args[0] == "--version" || args[0] == "-version":
		return version(ctx, env, nil)
	}
	if group := usageOf(args[0]); group != usageOf("\x00") {
		if len(args) == 1 || isHelp(args[1]) {
			fmt.Fprint(env.Stdout, group)
			if len(args) == 1 {
				return fmt.Errorf("%q needs a sub-command", args[0])
			}
			return nil
		}
		fmt.Fprint(env.Stderr, group)
		return fmt.Errorf("unknown command %q", strings.Join(args, " "))
	}
	fmt.Fprint(env.Stderr, usage)
	return fmt.Errorf("unknown command %q", strings.Join(args, " "))
}

// Version is troco's version; release builds set it with -ldflags "-X troco/server/cli.Version=…".
var Version = "dev"

func version(_ context.Context, env Env, args []string) error {
	fs := newFlags(env, "version")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	line := "troco " + Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				line += " (" + s.Value[:12] + ")"
			}
		}
		line += " " + bi.GoVersion
	}
	fmt.Fprintln(env.Stdout, line)
	return nil
}

// flagSet makes a FlagSet whose defaults come from TROCO_<FLAG> when set.
type flagSet struct {
	*flag.FlagSet
	env Env
	// envErr is the first TROCO_* variable whose value does not parse; parse reports it.
	envErr error
}

func newFlags(env Env, name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		out := fs.Output()
		for _, s := range synopses {
			if s.name == name {
				fmt.Fprintf(out, "Usage:\n  %s\n", s.line)
			}
		}
		switch name {
		case "platform configure":
			fmt.Fprint(out, splitRulesHelp)
		case "trigger":
			fmt.Fprintf(out, "\nSupported event types: %s\n", supportedTriggers())
		}
		fmt.Fprintf(out, "\nFlags of troco %s:\n", name)
		fs.PrintDefaults()
	}
	return &flagSet{FlagSet: fs, env: env}
}

func envName(flagName string) string {
	return "TROCO_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flagSet) str(name, def, help string) *string {
	if v := f.env.Getenv(envName(name)); v != "" {
		def = v
	}
	return f.String(name, def, help+" ("+envName(name)+")")
}

func (f *flagSet) boolean(name string, def bool, help string) *bool {
	if v := f.env.Getenv(envName(name)); v != "" {
		switch strings.ToLower(v) {
		case "1", "true", "on", "yes":
			def = true
		case "0", "false", "off", "no":
			def = false
		default:
			f.badEnv(name, v, "a boolean (1, true, on, yes or 0, false, off, no)")
		}
	}
	return f.Bool(name, def, help+" ("+envName(name)+")")
}

func (f *flagSet) integer(name string, def int, help string) *int {
	if v := f.env.Getenv(envName(name)); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		} else {
			f.badEnv(name, v, "a whole number")
		}
	}
	return f.Int(name, def, help+" ("+envName(name)+")")
}

func (f *flagSet) duration(name string, def time.Duration, help string) *time.Duration {
	if v := f.env.Getenv(envName(name)); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		} else {
			f.badEnv(name, v, "a duration such as 30s or 3m")
		}
	}
	return f.Duration(name, def, help+" ("+envName(name)+")")
}

// given reports whether the flag name was set on the command line or through its TROCO_ variable.
func (f *flagSet) given(name string) bool {
	set := f.env.Getenv(envName(name)) != ""
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// badEnv records a TROCO_* variable whose value is not what the flag takes.
func (f *flagSet) badEnv(name, value, want string) {
	if f.envErr == nil {
		f.envErr = fmt.Errorf("%s=%q: want %s", envName(name), value, want)
	}
}

// parse parses args, allowing flags after positional arguments, and returns the positionals.
func (f *flagSet) parse(args []string) ([]string, error) {
	if f.envErr != nil {
		return nil, f.envErr
	}
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			return nil, err
		}
		args = f.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

const defaultDB = "./troco-data/troco.db"

// openAdmin opens the database for an administration command.
// openAdmin opens the database for an administration command on serve's clock (real time plus
// the offset time travel recorded), so what it writes (a review's organization.updated, a key's
// expiry check, revoked_at) is dated as serve dates everything else.
func openAdmin(ctx context.Context, env Env, path string) (*db.DB, error) {
	return openTrigger(ctx, env, path)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// explainJSON is explain for a command run with --json: a domain error is also printed on
// stdout as the API's error envelope plus the HTTP status it would have
// ({"error":{"type","code","param","message"},"status":409}), so scripts can parse it.
func explainJSON(w io.Writer, asJSON bool, err error) error {
	if e, ok := domain.AsError(err); ok && asJSON {
		_ = printJSON(w, map[string]any{"error": e, "status": e.Status})
	}
	return explain(err)
}

// explain turns a domain error into a one-line CLI error.
func explain(err error) error {
	if e, ok := domain.AsError(err); ok {
		if e.Param != "" {
			return fmt.Errorf("%s (%s): %s", e.Code, e.Param, e.Message)
		}
		return fmt.Errorf("%s: %s", e.Code, e.Message)
	}
	return err
}

func orgCreate(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "org create")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	name := fs.String("name", "", "organization name (required)")
	displayName := fs.String("display-name", "", "the name buyers see on checkout, PIX and boleto (default: --name)")
	doc := fs.String("document", "", "CPF or CNPJ (digits; alphanumeric CNPJ allowed)")
	platform := fs.Bool("platform", false, "make the organization a platform (gets a plat_ id)")
	connected := fs.String("connected-to", "", "plat_… of the platform that orchestrates this organization")
	status := fs.String("activation-status", "", "not_submitted (default), in_review, active or disabled")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var org *domain.Organization
	err = d.Write(ctx, func(tx *db.Tx) error {
		org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: *name, DisplayName: *displayName, Document: *doc, Platform: *platform, ConnectedTo: *connected, ActivationStatus: *status})
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, org)
	}
	fmt.Fprintf(env.Stdout, "organization %s (%s)\n", org.ID, org.ActivationStatus)
	if org.Platform != nil {
		fmt.Fprintf(env.Stdout, "platform %s\n", *org.Platform)
	}
	return nil
}

func platformConfigure(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "platform configure")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	rules := fs.String("split-rules", "", `split rules (required), such as {"default":{"rate":150}}`)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], domain.PrefixPlatform) {
		return errors.New("usage: troco platform configure plat_… --split-rules '{\"default\":{\"rate\":150}}'")
	}
	obj, compact, err := domain.ParseSplitRules(*rules)
	if err != nil {
		return err
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var org *domain.Organization
	err = d.Write(ctx, func(tx *db.Tx) error {
		if err := tx.ConfigureSplitRules(pos[0], compact); err != nil {
			if errors.Is(err, db.ErrNotFound) {
				return domain.NotFound("platform", "platform", pos[0])
			}
			return err
		}
		org, err = tx.FindOrganizationByPlatformID(pos[0])
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, map[string]any{"platform": pos[0], "organization": org.ID, "split_rules_configured": true, "split_rules": obj, "active": org.PlatformActive()})
	}
	fmt.Fprintf(env.Stdout, "platform %s: split rules configured (active: %v)\n", pos[0], org.PlatformActive())
	return nil
}

func keyCreate(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "key create")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	org := fs.String("org", "", "org_… that owns the key (required)")
	envFlag := fs.String("env", "live", "live (the default: a key for live data) or test (a sandbox key)")
	scopes := fs.String("scopes", "read,write", "read,write | admin | platform_admin")
	name := fs.String("name", "", "a name to recognise the key")
	expires := fs.String("expires-at", "", "optional RFC 3339 expiry in the future")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if *org == "" {
		return errors.New("--org is required")
	}
	if *envFlag != "test" && *envFlag != "live" {
		return errors.New("--env must be test or live")
	}
	var exp time.Time
	if *expires != "" {
		t, err := domain.ParseTimestamp(*expires)
		if err != nil {
			return fmt.Errorf("--expires-at: %v", err)
		}
		exp = t
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var k *domain.APIKey
	err = d.Write(ctx, func(tx *db.Tx) error {
		k, err = core.CreateAPIKey(tx, core.APIKeyInput{OrgID: *org, Livemode: *envFlag == "live", Scopes: strings.Split(*scopes, ","), Name: *name, ExpiresAt: exp})
		if err != nil {
			return err
		}
		if err := core.AuditCommandLine(tx, k.Organization, cliOperator(env), "api_key.created", k.ID, k.Name+" ("+k.Environment+", "+strings.Join(k.Scopes, ",")+")"); err != nil {
			return err
		}
		if k.Livemode {
			return nil
		}
		return tx.DeleteSetting(bootstrapKeyUnshownSetting) // a test key now exists and was shown
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, k)
	}
	fmt.Fprintf(env.Stdout, "key %s (%s, %s)\ntoken (shown once): %s\n", k.ID, k.Environment, strings.Join(k.Scopes, ","), k.Token)
	return nil
}

// cliOperator names who runs an administration command, for revocations and the audit trail.
func cliOperator(env Env) string {
	if u := env.Getenv("USER"); u != "" {
		return "cli:" + u
	}
	return "cli"
}

func keyRevoke(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "key revoke")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	reason := fs.String("reason", "", "why the key is revoked")
	by := fs.String("by", "", "who revokes it (default: $USER)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: troco key revoke key_… [--reason R]")
	}
	who := *by
	if who == "" {
		who = cliOperator(env)
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var k *domain.APIKey
	err = d.Write(ctx, func(tx *db.Tx) error {
		if k, err = core.RevokeAPIKey(tx, pos[0], who, *reason); err != nil {
			return err
		}
		return core.AuditCommandLine(tx, k.Organization, who, "api_key.revoked", k.ID, *reason)
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, k)
	}
	fmt.Fprintf(env.Stdout, "key %s revoked at %s\n", k.ID, k.RevokedAt.Format(domain.TimeLayout))
	return nil
}

func keyList(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "key list")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	org := fs.String("org", "", "org_… whose keys to list (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if *org == "" {
		return errors.New("--org is required")
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var keys []*domain.APIKey
	var now time.Time
	err = d.Read(ctx, func(tx *db.Tx) error {
		now = tx.Now
		if _, err := tx.FindOrganizationByID(*org); err != nil {
			if errors.Is(err, db.ErrNotFound) {
				return domain.NotFound("org", "organization", *org)
			}
			return err
		}
		keys, err = tx.ListAPIKeys(*org)
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, domain.NewList("", keys, false).Data)
	}
	for _, k := range keys {
		state := "active"
		switch {
		case !k.RevokedAt.IsZero():
			state = "revoked"
		case k.Expired(now):
			state = "expired" // the server refuses it (401)
		}
		fmt.Fprintf(env.Stdout, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Environment, strings.Join(k.Scopes, ","), state, k.TokenHint, k.Name)
	}
	return nil
}

// splitRulesHelp explains --split-rules in `troco platform configure -h`.
var splitRulesHelp = `
--split-rules is ` + domain.SplitRulesFormat + `. For example
  {"default":{"rate":150,"fixed":50},"pix":{"rate":100}}
takes 1.5 % + R$ 0,50 of each card or boleto payment and 1 % of each PIX payment. Anything else
(an unknown key, a missing rate, a rate above 10000) is refused.
`
