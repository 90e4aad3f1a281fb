package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Validate checks one audit line: JSON holding the attributes every OCSF
// event here carries (class_uid, category_uid, activity_id, type_uid =
// class_uid*100 + activity_id, time, severity_id, metadata.version and
// metadata.product name, vendor and version) and those of its class
// (api and actor for API Activity, process, actor and device for Process
// Activity, src_endpoint and dst_endpoint for Network Activity). It
// returns the event decoded.
func Validate(line []byte) (*Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, fmt.Errorf("audit: not a JSON object: %w", err)
	}
	for _, k := range []string{"class_uid", "category_uid", "activity_id", "type_uid", "time", "severity_id", "metadata"} {
		if _, ok := raw[k]; !ok {
			return nil, fmt.Errorf("audit: no %s", k)
		}
	}
	var e Event
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	switch {
	case e.TypeUID != e.ClassUID*100+e.ActivityID:
		return nil, fmt.Errorf("audit: type_uid %d is not class_uid*100+activity_id", e.TypeUID)
	case e.CategoryUID != e.ClassUID/1000:
		return nil, fmt.Errorf("audit: category_uid %d does not hold class %d", e.CategoryUID, e.ClassUID)
	case e.Time <= 0:
		return nil, errors.New("audit: no time")
	case e.SeverityID < 1:
		return nil, errors.New("audit: no severity_id")
	case e.Metadata.Version == "" || e.Metadata.Product.Name == "" || e.Metadata.Product.VendorName == "" || e.Metadata.Product.Version == "":
		return nil, errors.New("audit: metadata lacks version or product")
	}
	switch e.ClassUID {
	case ClassAPIActivity:
		if e.API == nil || e.API.Operation == "" || e.Actor == nil || e.SrcEndpoint == nil {
			return nil, errors.New("audit: API Activity without api.operation, actor or src_endpoint")
		}
	case ClassProcessActivity:
		if e.Process == nil || e.Process.Name == "" || e.Actor == nil || e.Device == nil {
			return nil, errors.New("audit: Process Activity without process, actor or device")
		}
	case ClassNetworkActivity:
		if e.SrcEndpoint == nil || e.DstEndpoint == nil {
			return nil, errors.New("audit: Network Activity without src_endpoint or dst_endpoint")
		}
	default:
		return nil, fmt.Errorf("audit: class %d is not written here", e.ClassUID)
	}
	return &e, nil
}

// ReadFile reads an audit file, checking every line with Validate; the
// first line that fails is an error naming it.
func ReadFile(path string) ([]*Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	var out []*Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		e, err := Validate(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", path, err)
	}
	return out, nil
}
