package db

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"troco/server/domain"
)

// InsertEvent stores an event in scope, with one webhook outbox row per subscribed endpoint; it is
// written in the caller's transaction so the event and its deliveries exist exactly when the
// change they describe does. The e-mail the event causes, if any, is queued the same way.
func (tx *Tx) InsertEvent(s domain.Scope, e *domain.Event) error {
	e.ID = domain.NewID(domain.PrefixEvent)
	e.Object = "event"
	e.CreatedAt = domain.At(tx.Now)
	e.Livemode = s.Livemode
	e.Organization = s.OrgID
	data, n, err := encodeEventData(e.Data)
	if err != nil {
		return fmt.Errorf("db: encode: %w", err)
	}
	oid := objectID(e.Data.Object, data)
	var stored any // textDoc's choice, without building the form the engine does not take
	if tx.pg {
		stored = string(data)
	} else {
		stored = packJSON(elideObjectID(data, oid))
	}
	_, err = tx.exec("INSERT INTO events (id, org_id, livemode, type, request_id, data, object_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		e.ID, s.OrgID, boolInt(s.Livemode), tx.storedEventType(e.Type), e.Request.ID, stored, oid, tx.now())
	if err != nil {
		return translate(err, "insert event")
	}
	if err := tx.enqueueEmail(s, e); err != nil {
		return err
	}
	tx.events = append(tx.events, e)
	if tx.eventData == nil {
		tx.eventData = map[string]eventBytes{}
	}
	tx.eventData[e.ID] = eventBytes{data, n}
	return tx.enqueueWebhooks(s, e)
}

// encodeEventData is domain.MarshalJSON(d), built from the encoded object and
// previous_attributes (the bytes encoding/json writes for EventData's two fields), and the
// length of the object's JSON, which follows eventObjectPrefix in it.
func encodeEventData(d domain.EventData) ([]byte, int, error) {
	obj, err := domain.MarshalJSON(d.Object)
	if err != nil {
		return nil, 0, err
	}
	var prev []byte
	if len(d.PreviousAttributes) > 0 { // omitempty
		if prev, err = domain.MarshalJSON(d.PreviousAttributes); err != nil {
			return nil, 0, err
		}
	}
	const prevKey = `,"previous_attributes":`
	data := make([]byte, 0, len(eventObjectPrefix)+len(obj)+len(prevKey)+len(prev)+1)
	data = append(append(data, eventObjectPrefix...), obj...)
	if prev != nil {
		data = append(append(data, prevKey...), prev...)
	}
	return append(data, '}'), len(obj), nil
}

const eventCols = "id, org_id, livemode, type, request_id, data, object_id, created_at"

// elideObjectID leaves the object's id out of an event's encoded data: every occurrence (the
// object's own id, and texts that hold it, such as a payment intent's client secret or a
// charge's receipt URL) is replaced by the byte 0x01, which encoded JSON never holds (control
// characters are escaped). The events table holds the id in object_id, and its 27 random
// characters are the part of a payload that packing cannot shrink. restoreObjectID puts it back
// when the row is read; data that already holds a 0x01 byte is stored as it is.
func elideObjectID(data []byte, oid string) []byte {
	if oid == "" || bytes.IndexByte(data, 0x01) >= 0 || bytes.IndexByte([]byte(oid), 0x01) >= 0 {
		return data
	}
	return bytes.ReplaceAll(data, []byte(oid), []byte{0x01})
}

// restoreObjectID is the data elideObjectID stored for an event whose object_id is oid (rows
// written before, and rows written on PostgreSQL, hold no 0x01 byte and read as they are).
func restoreObjectID(data []byte, oid string) []byte {
	if oid == "" || bytes.IndexByte(data, 0x01) < 0 {
		return data
	}
	return bytes.ReplaceAll(data, []byte{0x01}, []byte(oid))
}

func scanEvent(s scanner) (*domain.Event, error) {
	var e domain.Event
	var live int
	var stored []byte
	var oid string
	var created int64
	if err := s.Scan(&e.ID, &e.Organization, &live, &e.Type, &e.Request.ID, &stored, &oid, &created); err != nil {
		return nil, err
	}
	e.Type = eventTypeName(e.Type)
	data, err := unpackJSON(stored)
	if err != nil {
		return nil, err
	}
	data = restoreObjectID(data, oid)
	e.Object = "event"
	e.Livemode = live == 1
	e.CreatedAt = domain.Unix(created)
	var raw struct {
		Object             json.RawMessage `json:"object"`
		PreviousAttributes map[string]any  `json:"previous_attributes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	e.Data = domain.EventData{Object: raw.Object, PreviousAttributes: raw.PreviousAttributes}
	return &e, nil
}

// FindEventByID returns an event in scope.
func (tx *Tx) FindEventByID(s domain.Scope, id string) (*domain.Event, error) {
	e, err := scanEvent(tx.queryRow("SELECT "+eventCols+" FROM events WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return e, translate(err, "find event")
}

// EventFilter narrows ListEvents.
type EventFilter struct {
	// Type is an exact type or a "prefix.*" wildcard.
	Type string
}

// ListEvents pages the events of a scope, newest first.
func (tx *Tx) ListEvents(s domain.Scope, f EventFilter, p ListParams) ([]*domain.Event, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	switch alts := tx.typeFilter(f.Type); len(alts) {
	case 0:
	case 1:
		w.add(alts[0].where, alts[0].args...)
	default:
		// A type's code and its name (rows written before codes), or every type under a
		// prefix: one range of events_scope_type each, merged by seq.
		w.union = alts
	}
	return page(tx, "events", eventCols, w, p, func(s scanner) (*domain.Event, error) { return scanEvent(s) })
}

// idFields caches, per object type, the index of its `json:"id"` field (-1: none).
var idFields sync.Map

// objectID is the id of an event's object (the events_object index; it used to be an expression
// index on the JSON, which packed data no longer allows): the object's `json:"id"` field, or,
// for an object that is not a struct, its id in the encoded event data.
func objectID(obj any, data []byte) string {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		t := v.Type()
		idx, ok := idFields.Load(t)
		if !ok {
			i := -1
			for j := range t.NumField() {
				if f := t.Field(j); f.IsExported() && !f.Anonymous && (f.Tag.Get("json") == "id" || strings.HasPrefix(f.Tag.Get("json"), "id,")) && f.Type.Kind() == reflect.String {
					i = j
					break
				}
			}
			idx, _ = idFields.LoadOrStore(t, i)
		}
		if i := idx.(int); i >= 0 {
			return v.Field(i).String()
		}
	}
	var d struct {
		Object struct {
			ID any `json:"id"`
		} `json:"object"`
	}
	_ = json.Unmarshal(data, &d)
	if id, ok := d.Object.ID.(string); ok {
		return id
	}
	return ""
}
