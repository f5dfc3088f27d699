package cli

import (
	"context"
	"fmt"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// userJSON is what `troco user create --json` and `troco user signin-link --json` print.
type userJSON struct {
	ID                 string      `json:"id"`
	Object             string      `json:"object"`
	Email              string      `json:"email"`
	Role               string      `json:"role"`
	Organization       string      `json:"organization"`
	SigninURL          string      `json:"signin_url"`
	SigninURLExpiresAt domain.Time `json:"signin_url_expires_at"`
}

func printUser(env Env, asJSON bool, u *domain.User, link *core.SigninLink, baseURL string) error {
	url := core.SigninURL(baseURL, link.Token)
	if asJSON {
		return printJSON(env.Stdout, userJSON{ID: u.ID, Object: "user", Email: u.Email, Role: u.Role, Organization: u.Organization,
			SigninURL: url, SigninURLExpiresAt: domain.At(link.ExpiresAt)})
	}
	fmt.Fprintf(env.Stdout, "user %s (%s, %s) in %s\n", u.ID, u.Email, u.Role, u.Organization)
	fmt.Fprintf(env.Stdout, "one-time sign-in link (valid until %s): %s\n", link.ExpiresAt.UTC().Format(time.RFC3339), url)
	return nil
}

func userBaseURL(fs *flagSet) *string {
	return fs.str("base-url", "", "the dashboard's base URL (default: the one serve recorded, else https://localhost:8443)")
}

// signinBase is the base URL a sign-in link is printed with: the flag when given, else the one
// the last serve on this database recorded (whatever port it got), else the default address.
func signinBase(ctx context.Context, d *db.DB, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	rec, err := recordedServeSettings(ctx, d)
	if err != nil {
		return "", err
	}
	if rec.baseURL != "" {
		return rec.baseURL, nil
	}
	return "https://localhost:8443", nil
}

// userCreate adds a person to an organization and prints a one-time sign-in link; the audit
// trail names the operator (cli:$USER or --by).
func userCreate(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "user create")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	org := fs.String("org", "", "org_… the person belongs to (required)")
	email := fs.String("email", "", "e-mail address (required)")
	role := fs.String("role", "", "owner, admin, developer or viewer (required)")
	by := fs.String("by", "", "who adds the person, for the audit trail (default: $USER)")
	baseURL := userBaseURL(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := fs.parse(args); err != nil {
		return err
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
	var u *domain.User
	var link *core.SigninLink
	err = d.Write(ctx, func(tx *db.Tx) error {
		if u, err = core.CreateUser(tx, core.UserInput{OrgID: *org, Email: *email, Role: *role}); err != nil {
			return err
		}
		// The owners' audit trail shows people added from the command line as it shows those
		// added on the dashboard, naming the operator.
		if err = core.AuditCommandLine(tx, u.Organization, who, "user.created", u.ID, u.Email+" ("+u.Role+")"); err != nil {
			return err
		}
		link, err = core.IssueSigninLink(tx, u.ID)
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	base, err := signinBase(ctx, d, *baseURL)
	if err != nil {
		return err
	}
	return printUser(env, *asJSON, u, link, base)
}

func userSigninLink(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "user signin-link")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	baseURL := userBaseURL(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: troco user signin-link user_…")
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var u *domain.User
	var link *core.SigninLink
	err = d.Write(ctx, func(tx *db.Tx) error {
		if link, err = core.IssueSigninLink(tx, pos[0]); err != nil {
			return err
		}
		u, err = tx.FindUserByID(pos[0])
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	base, err := signinBase(ctx, d, *baseURL)
	if err != nil {
		return err
	}
	return printUser(env, *asJSON, u, link, base)
}

// userRemove takes a person out of their organization (their sessions end at once); the last
// owner of an organization stays. The audit trail names the operator (cli:$USER or --by).
func userRemove(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "user remove")
	dbPath := fs.str("db", defaultDB, "SQLite file")
	by := fs.String("by", "", "who removes the person (default: $USER)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: troco user remove user_…")
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
	var u *domain.User
	err = d.Write(ctx, func(tx *db.Tx) error {
		u, err = core.RemoveUserCommandLine(tx, who, pos[0])
		return err
	})
	if err != nil {
		return explainJSON(env.Stdout, *asJSON, err)
	}
	if *asJSON {
		return printJSON(env.Stdout, map[string]any{"id": u.ID, "object": "user", "email": u.Email, "organization": u.Organization, "deleted": true})
	}
	fmt.Fprintf(env.Stdout, "user %s (%s) removed from %s; their sessions are ended\n", u.ID, u.Email, u.Organization)
	return nil
}
