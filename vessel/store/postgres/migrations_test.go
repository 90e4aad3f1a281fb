package postgres

import (
	"fmt"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/store/migrate"
)

// knownGaps are the versions the migrations skip on purpose: there is no
// 0006, and deployed databases recorded 0007 and 0008, which therefore
// keep their numbers (migrations/README.md).
var knownGaps = []int{6}

// TestMigrationGaps: the embedded migrations skip only the known versions,
// so a new file numbered past the next free version is refused here (no
// database needed).
func TestMigrationGaps(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(migrate.Gaps(ms)), fmt.Sprint(knownGaps); got != want {
		t.Fatalf("the migrations skip versions %s, want only the known gaps %s (migrations/README.md); number a new one %d",
			got, want, migrate.Latest(ms)+1)
	}
}
