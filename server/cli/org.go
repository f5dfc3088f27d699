package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// orgSetStatus records an administrator's review of an organization's activation (live mode has
// no simulated outcome): `troco org set-status org_… --status active|disabled|in_review|not_submitted
// [--env live|test|both] [--disabled-reason R] [--missing a,b]`. Each change emits organization.updated.
func orgSetStatus(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "org set-status")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	status := fs.String("status", "", "active, disabled, in_review or not_submitted (required)")
	envFlag := fs.String("env", "live", "live, test or both")
	reason := fs.String("disabled-reason", "", "disabled only: a final reason such as rejected.other (no resubmission)")
	missing := fs.String("missing", "", "disabled only: comma-separated requirements to correct, such as documents.identity")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], domain.PrefixOrganization) {
		return errors.New("usage: troco org set-status org_… --status S [--env live|test|both] [--disabled-reason R] [--missing a,b]")
	}
	var modes []bool
	switch *envFlag {
	case "live":
		modes = []bool{true}
	case "test":
		modes = []bool{false}
	case "both":
		modes = []bool{true, false}
	default:
		return errors.New("--env must be live, test or both")
	}
	d := core.Decision{Status: *status, DisabledReason: *reason}
	if *missing != "" {
		d.Missing = strings.Split(*missing, ",")
	}
	if d.Status != domain.ActivationDisabled && (d.DisabledReason != "" || d.Missing != nil) {
		return errors.New("--disabled-reason and --missing go with --status disabled")
	}
	store, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	var out []*domain.Organization
	err = store.Write(ctx, func(tx *db.Tx) error {
		for _, live := range modes {
			o, err := core.DecideActivation(tx, pos[0], live, d, "")
			if err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		if len(out) == 1 {
			return printJSON(env.Stdout, out[0])
		}
		return printJSON(env.Stdout, out)
	}
	for _, o := range out {
		mode := "test"
		if o.Livemode {
			mode = "live"
		}
		fmt.Fprintf(env.Stdout, "organization %s (%s): %s\n", o.ID, mode, o.ActivationStatus)
	}
	return nil
}

// orgUpdate changes an organization's names: `troco org update org_… [--display-name D] [--name N]`.
// The display name is what buyers see on the checkout, the PIX code and the boleto; an empty
// --display-name clears it (the name is shown). Emits organization.updated like the API.
func orgUpdate(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "org update")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	fs.String("display-name", "", "the name buyers see on checkout, PIX and boleto (empty: use --name)")
	fs.String("name", "", "the organization's (legal) name")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], domain.PrefixOrganization) {
		return errors.New("usage: troco org update org_… [--display-name D] [--name N]")
	}
	var p core.OrganizationParams
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "display-name":
			p.DisplayName = domain.Opt[string]{Set: true, V: f.Value.String(), Null: f.Value.String() == ""}
		case "name":
			p.Name = domain.Opt[string]{Set: true, V: f.Value.String()}
		}
	})
	if !p.DisplayName.Set && !p.Name.Set {
		return errors.New("nothing to update: give --display-name and/or --name")
	}
	store, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	var o *domain.Organization
	err = store.Write(ctx, func(tx *db.Tx) error {
		o, err = core.UpdateOrganization(tx, domain.Actor{Scope: domain.Scope{OrgID: pos[0], Livemode: true}}, core.OrgCaller{}, pos[0], p)
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, o)
	}
	fmt.Fprintf(env.Stdout, "organization %s: name %q, shown to buyers as %q\n", o.ID, o.Name, o.ShownName())
	return nil
}
