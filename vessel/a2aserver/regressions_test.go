package a2aserver_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
)

// a follow-up message with a push config and the push-working
// extension, sent to a replica that does not hold the paused task, is
// forwarded to the holding replica without its A2A-Extensions: the config
// is stored without the flag and gets no WORKING update of the turn.
func TestForwardedMessageKeepsPushWorking(t *testing.T) {
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	}
	postgres.Register()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "vt_fwdwork_" + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	rcv := newReceiver(t)
	so1, ho1 := withPush(t, &pushRig{}, rcv, nil)
	so2, ho2 := withPush(t, &pushRig{}, rcv, nil)
	opt := withApproval(settings.Approval{Tools: []string{"bash"}})
	h1 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, so1, ho1, opt)
	h2 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, so2, ho2, opt)
	alice, aliceW := as(h1.keyApp1, "alice"), asWorking(h1.keyApp1, "alice")

	task, err := h1.send(alice, textMsg("#script:twocalls go"))
	if err != nil {
		t.Fatal(err)
	}
	ap := pending(t, task)
	cfg := pushCfg(rcv.url + "/hooks/fw")
	cfg.ID = "fw"
	res, err := h2.client(h2.agentID).SendMessage(aliceW, &a2a.SendMessageRequest{
		Message: decide(task, ap.ApprovalID, verdict("e1", "approve"), verdict("e2", "approve")),
		Config:  &a2a.SendMessageConfig{PushConfig: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if done, ok := res.(*a2a.Task); !ok || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("forwarded decision: %#v", res)
	}
	waitFor(t, "the end pushed to /hooks/fw", func() bool {
		got := rcv.at("/hooks/fw")
		return len(got) > 0 && got[len(got)-1].State == a2a.TaskStateCompleted
	})
	checkWorkingThen(t, "forwarded turn, /hooks/fw", rcv.at("/hooks/fw"), a2a.TaskStateCompleted, false, 3)
}
