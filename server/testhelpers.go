package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"troco/db"
	"troco/server/domain"
)

// ClockOffsetSetting is where the sandbox clock's offset survives restarts.
const ClockOffsetSetting = "clock_offset_seconds"

// maxAdvance bounds one time-travel step (ten years).
const maxAdvance = 10 * 365 * 24 * 3600

func (s *Server) handleAdvanceClock() http.Handler {
	type body struct {
		Seconds *int64 `json:"seconds"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := authFrom(r.Context())
		if a.Actor.Livemode {
			s.writeError(w, r, domain.TestmodeRequired())
			return
		}
		if !s.cfg.AllowTimeTravel {
			s.writeError(w, r, &domain.Error{Status: http.StatusForbidden, Type: domain.TypeInvalidRequest, Code: domain.CodeTimeTravelDisabled,
				Message: "Time travel is disabled; start the server with --allow-time-travel."})
			return
		}
		var b body
		if err := s.decode(w, r, &b); err != nil {
			s.writeError(w, r, err)
			return
		}
		if b.Seconds == nil {
			s.writeError(w, r, domain.Missing("seconds"))
			return
		}
		if *b.Seconds < 1 || *b.Seconds > maxAdvance {
			s.writeError(w, r, domain.Invalid("seconds", "seconds must be an integer between 1 and %d.", maxAdvance))
			return
		}
		offset, err := s.advanceClock(r.Context(), time.Duration(*b.Seconds)*time.Second)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"object":         "test_clock",
			"livemode":       false,
			"now":            domain.At(s.cfg.Clock.Now()),
			"advanced_by":    *b.Seconds,
			"offset_seconds": int64(offset / time.Second),
		})
	})
}

// advanceClock moves the sandbox clock by d, records the offset (a restart keeps it) and runs the
// jobs that came due: the one operation behind the API's advance-clock and the dashboard's clock.
func (s *Server) advanceClock(ctx context.Context, d time.Duration) (time.Duration, error) {
	var offset time.Duration
	err := s.db.Write(ctx, func(tx *db.Tx) error {
		// From the stored offset when another replica moved the clock further: every replica
		// of one database shares one sandbox clock.
		base := s.cfg.Clock.Offset()
		if stored, ok, err := storedClockOffset(tx); err != nil {
			return err
		} else if ok && stored > base {
			base = stored
		}
		offset = base + d
		return tx.PutSetting(ClockOffsetSetting, strconv.FormatInt(int64(offset/time.Second), 10))
	})
	if err != nil {
		return s.cfg.Clock.Offset(), err
	}
	offset = s.cfg.Clock.AdvanceTo(offset)
	if s.cfg.Jobs != nil {
		err = s.cfg.Jobs.RunDue(ctx)
	}
	return offset, err
}

// storedClockOffset reads the sandbox clock offset recorded by advanceClock.
func storedClockOffset(tx *db.Tx) (time.Duration, bool, error) {
	v, ok, err := tx.GetSetting(ClockOffsetSetting)
	if err != nil || !ok {
		return 0, false, err
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, nil
	}
	return time.Duration(secs) * time.Second, true, nil
}

// sharedClock reports whether this server shares its sandbox clock with other replicas: on
// PostgreSQL with time travel allowed, the offset another replica recorded is read back before
// each request and every second by a job.
func (s *Server) sharedClock() bool {
	return s.cfg.AllowTimeTravel && s.cfg.Clock != nil && s.db != nil && s.db.Engine() == "postgres"
}

// syncClock catches this replica's clock up with the offset recorded in the database.
func (s *Server) syncClock(ctx context.Context) error {
	var stored time.Duration
	var ok bool
	err := s.db.ReadOne(ctx, func(tx *db.Tx) error {
		var err error
		stored, ok, err = storedClockOffset(tx)
		return err
	})
	if err == nil && ok {
		s.cfg.Clock.AdvanceTo(stored)
	}
	return err
}
