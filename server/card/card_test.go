package card

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// withCheckDigit appends the Luhn check digit to a prefix of digits.
func withCheckDigit(prefix string) string {
	for d := '0'; d <= '9'; d++ {
		if n := prefix + string(d); Luhn(n) {
			return n
		}
	}
	panic("unreachable")
}

// pad fills prefix with zeros to length-1 digits and appends the Luhn check digit.
func pad(prefix string, length int) string {
	return withCheckDigit(prefix + strings.Repeat("0", length-1-len(prefix)))
}

// futureCard is a well-formed input for number, valid at testNow.
func futureCard(number string) Input {
	return Input{Number: number, CVC: "123", HolderName: "Maria Silva", ExpMonth: 12, ExpYear: 2030}
}

var testNow = time.Date(2026, time.March, 15, 12, 0, 0, 0, time.UTC)

func TestSimulateEveryTestCard(t *testing.T) {
	for _, c := range TestCards() {
		t.Run(c.Number, func(t *testing.T) {
			is := is.New(t)
			got := Simulate(c.Number, false)
			is.Equal(got.Outcome, c.Outcome) // first-charge outcome from the table
			if c.Outcome != OutcomeDeclined {
				is.True(got.Decline == nil) // no payment_error unless declined
				return
			}
			is.True(got.Decline != nil) // declined carries a payment_error
			is.Equal(got.Decline.Category, c.Category)
			is.Equal(got.Decline.Code, c.Code)
			is.Equal(got.Decline.Message, c.Message)
			is.Equal(got.Decline.AdviceCode, c.AdviceCode)
			is.True(got.Decline.AdviceCode != "") // SPEC 7.1: every failing card sets advice_code

			again := Simulate(c.Number, true)
			is.Equal(again, got) // a declining card declines the same way on reuse
		})
	}
}

// TestTestCardCounts guards against a lost or duplicated row; the counts come from reading
// SPEC 7.1 by hand: 4 success/waiting, 2 reuse, and 18 + 18 + 11 + 17 declines.
func TestTestCardCounts(t *testing.T) {
	is := is.New(t)
	byCategory := map[Category]int{}
	byOutcome := map[Outcome]int{}
	reuse, declines := 0, 0
	numbers := map[string]bool{}
	for _, c := range TestCards() {
		is.True(!numbers[c.Number]) // numbers are unique
		numbers[c.Number] = true
		byOutcome[c.Outcome]++
		if c.ReuseOutcome != "" {
			reuse++
			continue
		}
		if c.Outcome == OutcomeDeclined {
			declines++
			byCategory[c.Category]++
		}
	}
	is.Equal(len(TestCards()), 70)                    // every row of SPEC 7.1
	is.Equal(reuse, 2)                                // saved-card reuse rows
	is.Equal(declines, 64)                            // decline rows
	is.Equal(byCategory[CategoryIssuerDeclined], 18)  // issuer_declined rows
	is.Equal(byCategory[CategoryInvalid], 18)         // invalid rows
	is.Equal(byCategory[CategoryBlocked], 11)         // blocked rows
	is.Equal(byCategory[CategoryProcessingError], 17) // processing_error rows
	is.Equal(byOutcome[OutcomeSucceeded], 3)          // 4242… and the two reuse cards
	is.Equal(byOutcome[OutcomeRequiresCapture], 1)
	is.Equal(byOutcome[OutcomeProcessing], 1)
	is.Equal(byOutcome[OutcomePending], 1)
}

// specRow is one card row of testdata/spec-7.1.md with the section it appears in.
type specRow struct {
	section string
	cells   []string
}

// readSpecRows parses the card rows of the verbatim copy of SPEC 7.1.
func readSpecRows(t *testing.T) []specRow {
	t.Helper()
	f, err := os.Open("testdata/spec-7.1.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []specRow
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Success and waiting"):
			section = "success"
		case strings.HasPrefix(line, "Saved-card reuse"):
			section = "reuse"
		case strings.HasPrefix(line, "Declines"):
			section = "declines"
		case strings.HasPrefix(line, "| `"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.Trim(strings.TrimSpace(c), "`"))
			}
			rows = append(rows, specRow{section: section, cells: cells})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestTableMatchesSpec compares the Go table with a verbatim copy of SPEC 7.1, cell by cell.
func TestTableMatchesSpec(t *testing.T) {
	rows := readSpecRows(t)
	is := is.New(t)
	is.Equal(len(rows), len(TestCards())) // same number of rows as the spec
	for _, r := range rows {
		t.Run(r.cells[0], func(t *testing.T) {
			is := is.New(t)
			c, ok := LookupTestCard(r.cells[0])
			is.True(ok) // spec number is in the table
			switch r.section {
			case "success":
				is.Equal(string(c.Outcome), r.cells[1])
				is.Equal(c.ReuseOutcome, Outcome(""))
				is.Equal(c.Code, "")
			case "reuse":
				is.Equal(string(c.Outcome), r.cells[1])
				switch {
				case strings.Contains(r.cells[2], "single_use_card"):
					is.Equal(c.ReuseOutcome, OutcomeDeclined)
					is.Equal(c.Code, "single_use_card")
				case strings.HasPrefix(r.cells[2], "processing"):
					is.Equal(c.ReuseOutcome, OutcomeProcessing)
				default:
					t.Fatalf("unexpected reuse cell %q", r.cells[2])
				}
			case "declines":
				is.Equal(c.Outcome, OutcomeDeclined)
				is.Equal(string(c.Category), r.cells[1])
				is.Equal(c.Code, r.cells[2])
				is.Equal(c.Message, r.cells[3])
			default:
				t.Fatalf("row outside a known section: %v", r.cells)
			}
		})
	}
}

func TestReuse(t *testing.T) {
	is := is.New(t)

	single, _ := LookupTestCard("4000009000000524")
	got := Simulate("4000009000000623", false)
	is.Equal(got, Result{Outcome: OutcomeSucceeded}) // first charge succeeds
	got = Simulate("4000009000000623", true)
	is.Equal(got.Outcome, OutcomeDeclined) // reuse is refused
	is.Equal(*got.Decline, Decline{
		Category:   CategoryBlocked,
		Code:       "single_use_card",
		Message:    single.Message,
		AdviceCode: AdviceDoNotTryAgain,
	}) // same payment_error as the single_use_card row

	is.Equal(Simulate("4000009000000631", false), Result{Outcome: OutcomeSucceeded}) // first charge succeeds
	is.Equal(Simulate("4000009000000631", true), Result{Outcome: OutcomeProcessing}) // reuse waits for the webhook

	is.Equal(Simulate("4242424242424242", true), Result{Outcome: OutcomeSucceeded})       // ordinary card on reuse
	is.Equal(Simulate("4000000000003220", true), Result{Outcome: OutcomeRequiresCapture}) // others behave the same
}

func TestAdviceCodes(t *testing.T) {
	is := is.New(t)
	for _, c := range TestCards() {
		if c.Code == "" {
			is.Equal(c.AdviceCode, AdviceCode("")) // no advice without a decline
			continue
		}
		switch c.Category {
		case CategoryInvalid:
			is.Equal(c.AdviceCode, AdviceConfirmCardData) // invalid: fix the card data
		case CategoryBlocked:
			is.Equal(c.AdviceCode, AdviceDoNotTryAgain) // blocked: never retry
		case CategoryProcessingError:
			is.Equal(c.AdviceCode, AdviceTryAgainLater) // processing errors are transient
		case CategoryIssuerDeclined:
			is.True(c.AdviceCode == AdviceTryAgainLater || c.AdviceCode == AdviceDoNotTryAgain)
		default:
			t.Fatalf("%s: unknown category %q", c.Number, c.Category)
		}
	}
	want := map[string]AdviceCode{
		"4000000000009995": AdviceTryAgainLater, // insufficient_funds
		"4000009000000037": AdviceTryAgainLater, // card_velocity_exceeded
		"4000009000000128": AdviceTryAgainLater, // reenter_transaction
		"4000000000000002": AdviceDoNotTryAgain, // generic_decline
		"4000009000000029": AdviceDoNotTryAgain, // call_issuer
	}
	for n, a := range want {
		c, _ := LookupTestCard(n)
		is.Equal(c.AdviceCode, a) // advice for a known issuer decline
	}
}

// TestTestCardsPassValidate: test cards must be accepted by Validate (every one passes Luhn),
// so their scripted outcome comes from Simulate.
func TestTestCardsPassValidate(t *testing.T) {
	for _, c := range TestCards() {
		t.Run(c.Number, func(t *testing.T) {
			is := is.New(t)
			is.True(Luhn(c.Number))                               // spec numbers pass Luhn
			is.Equal(DetectBrand(c.Number), BrandVisa)            // all test cards are Visa
			is.Equal(futureCard(c.Number).Validate(testNow), nil) // format is fine
		})
	}
}

func TestScriptedOutcomesAreNotFormatErrors(t *testing.T) {
	is := is.New(t)
	for _, n := range []string{"4000000000000069", "4000000000000127", "4000009000000466", "4000009000000474"} {
		is.Equal(futureCard(n).Validate(testNow), nil) // accepted by format validation
		c, _ := LookupTestCard(n)
		is.Equal(Simulate(n, false).Decline.Code, c.Code) // the table decides the decline
	}
}

func TestUnknownCardApproves(t *testing.T) {
	is := is.New(t)
	for _, n := range []string{"5555555555554444", "378282246310005", "4111111111111111", pad("401178", 16)} {
		_, ok := LookupTestCard(n)
		is.True(!ok)                                                    // not a test card
		is.Equal(futureCard4(n).Validate(testNow), nil)                 // well formed
		is.Equal(Simulate(n, false), Result{Outcome: OutcomeSucceeded}) // approves
		is.Equal(Simulate(n, true), Result{Outcome: OutcomeSucceeded})  // approves on reuse too
	}
}

// futureCard4 is futureCard with a CVC of the brand's length.
func futureCard4(number string) Input {
	in := futureCard(number)
	in.CVC = "1234"[:DetectBrand(number).CVCLength()]
	return in
}

func TestLookupNormalizes(t *testing.T) {
	is := is.New(t)
	c, ok := LookupTestCard("4000 0000-0000 9995")
	is.True(ok) // spaces and dashes are ignored
	is.Equal(c.Code, "insufficient_funds")
	is.Equal(Simulate("4000 0000 0000 9995", false).Decline.Code, "insufficient_funds")
}

func TestNormalize(t *testing.T) {
	is := is.New(t)
	is.Equal(Normalize("4242 4242-4242 4242"), "4242424242424242")
	is.Equal(Normalize(" 4242-4242 "), "42424242")
	is.Equal(Normalize("4242.4242"), "4242.4242") // only spaces and dashes are removed
}

func TestLuhn(t *testing.T) {
	valid := []string{
		"4242424242424242", "4000056655665556", "5555555555554444", "2223003122003222",
		"378282246310005", "371449635398431", "30569309025904", "38520000023237",
		"6062826786276634", "4242 4242 4242 4242", "4242-4242-4242-4242", "0",
	}
	invalid := []string{
		"4242424242424241", "1234567812345678", "", "   ", "4242a42424242424", "4242.4242.4242.4242",
		"378282246310006",
	}
	for _, n := range valid {
		t.Run("valid "+n, func(t *testing.T) {
			is := is.New(t)
			is.True(Luhn(n))
		})
	}
	for _, n := range invalid {
		t.Run("invalid "+n, func(t *testing.T) {
			is := is.New(t)
			is.True(!Luhn(n))
		})
	}
}

func TestDetectBrand(t *testing.T) {
	tests := []struct {
		number string
		want   Brand
	}{
		{"4242424242424242", BrandVisa},
		{"4111111111111", BrandVisa},
		{"5555555555554444", BrandMastercard},
		{"5105105105105100", BrandMastercard},
		{pad("2221", 16), BrandMastercard},
		{pad("2720", 16), BrandMastercard},
		{pad("2220", 16), BrandUnknown},
		{pad("2721", 16), BrandUnknown},
		{"378282246310005", BrandAmex},
		{"341111111111111", BrandAmex},
		{"30569309025904", BrandDiners},
		{pad("305", 14), BrandDiners},
		{pad("306", 14), BrandUnknown},
		{pad("36", 14), BrandDiners},
		{"38520000023237", BrandDiners},
		{pad("39", 16), BrandDiners},
		{pad("606282", 16), BrandHipercard},
		{pad("606283", 16), BrandUnknown},
		// Elo ranges inside Visa's 4 and outside anything else.
		{pad("401178", 16), BrandElo},
		{pad("401179", 16), BrandElo},
		{pad("401180", 16), BrandVisa},
		{pad("431274", 16), BrandElo},
		{pad("438935", 16), BrandElo},
		{pad("451416", 16), BrandElo},
		{pad("457393", 16), BrandElo},
		{pad("457631", 16), BrandElo},
		{pad("457632", 16), BrandElo},
		{pad("457633", 16), BrandVisa},
		{pad("504175", 16), BrandElo},
		{pad("506699", 16), BrandElo},
		{pad("506778", 16), BrandElo},
		{pad("506779", 16), BrandUnknown},
		{pad("509000", 16), BrandElo},
		{pad("509999", 16), BrandElo},
		{pad("627780", 16), BrandElo},
		{pad("636297", 16), BrandElo},
		{pad("636368", 16), BrandElo},
		{pad("650031", 16), BrandElo},
		{pad("650033", 16), BrandElo},
		{pad("650034", 16), BrandUnknown},
		{pad("650035", 16), BrandElo},
		{pad("650051", 16), BrandElo},
		{pad("650405", 16), BrandElo},
		{pad("650439", 16), BrandElo},
		{pad("650485", 16), BrandElo},
		{pad("650538", 16), BrandElo},
		{pad("650541", 16), BrandElo},
		{pad("650598", 16), BrandElo},
		{pad("650700", 16), BrandElo},
		{pad("650718", 16), BrandElo},
		{pad("650719", 16), BrandUnknown},
		{pad("650720", 16), BrandElo},
		{pad("650727", 16), BrandElo},
		{pad("650901", 16), BrandElo},
		{pad("650978", 16), BrandElo},
		{pad("651652", 16), BrandElo},
		{pad("651679", 16), BrandElo},
		{pad("655000", 16), BrandElo},
		{pad("655019", 16), BrandElo},
		{pad("655020", 16), BrandUnknown},
		{pad("655021", 16), BrandElo},
		{pad("655058", 16), BrandElo},
		{"6011111111111117", BrandUnknown},
		{"4242 4242 4242 4242", BrandVisa},
		{"42x2424242424242", BrandUnknown},
		{"", BrandUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			is := is.New(t)
			is.Equal(DetectBrand(tt.number), tt.want)
		})
	}
}

func TestBrandHelpers(t *testing.T) {
	is := is.New(t)
	is.Equal(BrandAmex.CVCLength(), 4)
	is.Equal(BrandVisa.CVCLength(), 3)
	is.Equal(BrandElo.CVCLength(), 3)
	is.Equal(BrandElo.Network(), "elo")
	is.True(BrandAmex.ValidLength(15) && !BrandAmex.ValidLength(16))
	is.True(BrandVisa.ValidLength(13) && BrandVisa.ValidLength(16) && BrandVisa.ValidLength(19))
	is.True(!BrandVisa.ValidLength(15))
	is.True(BrandDiners.ValidLength(14) && BrandDiners.ValidLength(19) && !BrandDiners.ValidLength(13))
	is.True(BrandMastercard.ValidLength(16) && !BrandMastercard.ValidLength(19))
}

func TestValidate(t *testing.T) {
	ok := Input{Number: "4242 4242 4242 4242", CVC: "123", ExpMonth: 3, ExpYear: 2026}
	amex := Input{Number: "378282246310005", CVC: "1234", ExpMonth: 1, ExpYear: 2027}
	with := func(in Input, f func(*Input)) Input { f(&in); return in }

	tests := []struct {
		name      string
		in        Input
		now       time.Time
		wantCode  string
		wantParam string
	}{
		{"valid visa", ok, testNow, "", ""},
		{"valid amex", amex, testNow, "", ""},
		{"valid elo", with(ok, func(in *Input) { in.Number = pad("401178", 16) }), testNow, "", ""},
		{"valid hipercard", with(ok, func(in *Input) { in.Number = pad("606282", 16) }), testNow, "", ""},
		{"valid diners 14", with(ok, func(in *Input) { in.Number = "30569309025904" }), testNow, "", ""},
		{"valid visa 13", with(ok, func(in *Input) { in.Number = "4222222222222" }), testNow, "", ""},
		{"last instant of expiry month", ok, time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC), "", ""},
		{"expiry checked in UTC", ok, time.Date(2026, 3, 31, 22, 0, 0, 0, time.FixedZone("BRT", -3*3600)), CodeExpiredCard, "card[exp_month]"},
		{"december rolls to next year", with(ok, func(in *Input) { in.ExpMonth, in.ExpYear = 12, 2026 }), time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), "", ""},

		{"empty number", with(ok, func(in *Input) { in.Number = "" }), testNow, CodeInvalidNumber, "card[number]"},
		{"letters in number", with(ok, func(in *Input) { in.Number = "4242a42424242424" }), testNow, CodeInvalidNumber, "card[number]"},
		{"dots in number", with(ok, func(in *Input) { in.Number = "4242.4242.4242.4242" }), testNow, CodeInvalidNumber, "card[number]"},
		{"luhn failure", with(ok, func(in *Input) { in.Number = "4242424242424241" }), testNow, CodeInvalidNumber, "card[number]"},
		{"visa wrong length", with(ok, func(in *Input) { in.Number = pad("4", 15) }), testNow, CodeInvalidNumber, "card[number]"},
		{"amex wrong length", with(amex, func(in *Input) { in.Number = pad("37", 16) }), testNow, CodeInvalidNumber, "card[number]"},
		{"too short", with(ok, func(in *Input) { in.Number = pad("9", 11) }), testNow, CodeInvalidNumber, "card[number]"},
		{"number checked first", with(ok, func(in *Input) { in.Number, in.ExpMonth, in.CVC = "1", 13, "x" }), testNow, CodeInvalidNumber, "card[number]"},

		{"month zero", with(ok, func(in *Input) { in.ExpMonth = 0 }), testNow, CodeInvalidExpiryMonth, "card[exp_month]"},
		{"month 13", with(ok, func(in *Input) { in.ExpMonth = 13 }), testNow, CodeInvalidExpiryMonth, "card[exp_month]"},
		{"month before year", with(ok, func(in *Input) { in.ExpMonth, in.ExpYear = 13, 26 }), testNow, CodeInvalidExpiryMonth, "card[exp_month]"},

		{"two-digit year", with(ok, func(in *Input) { in.ExpYear = 30 }), testNow, CodeInvalidExpiryYear, "card[exp_year]"},
		{"year before 2000", with(ok, func(in *Input) { in.ExpYear = 1999 }), testNow, CodeInvalidExpiryYear, "card[exp_year]"},
		{"year too far ahead", with(ok, func(in *Input) { in.ExpYear = 2077 }), testNow, CodeInvalidExpiryYear, "card[exp_year]"},
		{"year 50 ahead", with(ok, func(in *Input) { in.ExpYear = 2076 }), testNow, "", ""},

		{"expired last month", with(ok, func(in *Input) { in.ExpMonth = 2 }), testNow, CodeExpiredCard, "card[exp_month]"},
		{"expired last year", with(ok, func(in *Input) { in.ExpMonth, in.ExpYear = 12, 2025 }), testNow, CodeExpiredCard, "card[exp_month]"},
		{"first instant after expiry month", ok, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), CodeExpiredCard, "card[exp_month]"},
		{"expiry before cvc", with(ok, func(in *Input) { in.ExpMonth, in.CVC = 1, "" }), testNow, CodeExpiredCard, "card[exp_month]"},

		{"missing cvc", with(ok, func(in *Input) { in.CVC = "" }), testNow, CodeInvalidCVC, "card[cvc]"},
		{"short cvc", with(ok, func(in *Input) { in.CVC = "12" }), testNow, CodeInvalidCVC, "card[cvc]"},
		{"visa with 4-digit cvc", with(ok, func(in *Input) { in.CVC = "1234" }), testNow, CodeInvalidCVC, "card[cvc]"},
		{"letters in cvc", with(ok, func(in *Input) { in.CVC = "12a" }), testNow, CodeInvalidCVC, "card[cvc]"},
		{"amex with 3-digit cvc", with(amex, func(in *Input) { in.CVC = "123" }), testNow, CodeInvalidCVC, "card[cvc]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := tt.in.Validate(tt.now)
			if tt.wantCode == "" {
				is.Equal(err, nil) // valid card
				return
			}
			is.True(err != nil) // invalid card
			is.Equal(err.Code, tt.wantCode)
			is.Equal(err.Param, tt.wantParam)
			is.Equal(err.Message, messageByCode[tt.wantCode]) // the SPEC 7.1 message for the code
			is.True(err.Message != "")
		})
	}
}

func TestValidateMessagesMatchSpec(t *testing.T) {
	is := is.New(t)
	want := map[string]string{
		CodeInvalidNumber:      "The card number is invalid or the issuer does not exist.",
		CodeInvalidExpiryMonth: "The card expiration month has an invalid format.",
		CodeInvalidExpiryYear:  "The card expiration year has an invalid format.",
		CodeExpiredCard:        "The card has expired.",
		CodeInvalidCVC:         "The card security code has an invalid format.",
	}
	for code, msg := range want {
		err := newError(code, "p")
		is.Equal(err.Message, msg) // message from the spec row of the code
		is.Equal(err.Error(), code+": "+msg)
	}
	var e error = newError(CodeInvalidCVC, paramCVC)
	is.True(e != nil) // *Error satisfies error
}

func TestFingerprint(t *testing.T) {
	is := is.New(t)
	key := []byte("test-key-1")
	a := Fingerprint(key, "4242424242424242")
	is.Equal(len(a), 16)                                                // truncated
	is.Equal(Fingerprint(key, "4242 4242-4242 4242"), a)                // same card, same fingerprint
	is.True(Fingerprint(key, "4000056655665556") != a)                  // another card differs
	is.True(Fingerprint([]byte("test-key-2"), "4242424242424242") != a) // another key differs
	is.True(!strings.Contains(a, "4242"))                               // no digits of the card leak by construction
}

func TestLast4AndDescribe(t *testing.T) {
	is := is.New(t)
	is.Equal(Last4("4242 4242 4242 4242"), "4242")
	is.Equal(Last4("378282246310005"), "0005")
	is.Equal(Last4("12"), "12")
	brand, last4 := Describe("5555-5555-5555-4444")
	is.Equal(brand, BrandMastercard)
	is.Equal(last4, "4444")
}

func TestInputIsRedacted(t *testing.T) {
	is := is.New(t)
	in := Input{Number: "4000056655665556", CVC: "987", HolderName: "Maria", ExpMonth: 4, ExpYear: 2030}
	for _, s := range []string{fmt.Sprint(in), fmt.Sprintf("%+v", in), fmt.Sprintf("%#v", in)} {
		is.True(!strings.Contains(s, in.Number)) // number never printed
		is.True(!strings.Contains(s, "987"))     // CVC never printed
		is.True(strings.Contains(s, "5556"))     // last4 is
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("confirm", "card", in)
	is.True(!strings.Contains(buf.String(), in.Number)) // number never logged
	is.True(!strings.Contains(buf.String(), "987"))     // CVC never logged
	is.True(strings.Contains(buf.String(), "card.last4=5556"))
}
