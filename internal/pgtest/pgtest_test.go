package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect %s: %v", dbURL, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// userRelations counts tables, views, sequences... outside the system schemas.
func userRelations(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	var n int
	err := conn.QueryRow(context.Background(), `
		SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND n.nspname NOT LIKE 'pg_toast%'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, conn *pgx.Conn, table string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDatabasesAreSeparateAndEmpty(t *testing.T) {
	a, b := Database(t), Database(t)
	if a == b {
		t.Fatalf("two calls returned the same URL %s", a)
	}
	if os.Getenv(EnvURL) == "" {
		u, err := url.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		if u.Scheme != "postgres" || u.User.Username() != "postgres" || u.Hostname() != "127.0.0.1" ||
			u.Port() == "" || u.Query().Get("sslmode") != "disable" {
			t.Errorf("unexpected URL form %s", a)
		}
	}
	ca, cb := connect(t, a), connect(t, b)

	var na, nb string
	if err := ca.QueryRow(context.Background(), "SELECT current_database()").Scan(&na); err != nil {
		t.Fatal(err)
	}
	if err := cb.QueryRow(context.Background(), "SELECT current_database()").Scan(&nb); err != nil {
		t.Fatal(err)
	}
	if na == nb || !strings.Contains(a, "/"+na+"?") {
		t.Fatalf("databases %q (%s) and %q (%s)", na, a, nb, b)
	}
	if !strings.HasPrefix(na, "pgtest_testdatabasesareseparatea") {
		t.Errorf("database name %q does not say which test it is for", na)
	}
	if n := userRelations(t, ca); n != 0 {
		t.Errorf("fresh database %s has %d relations", na, n)
	}
	if n := userRelations(t, cb); n != 0 {
		t.Errorf("fresh database %s has %d relations", nb, n)
	}

	mustExec(t, ca, "CREATE TABLE items (id int PRIMARY KEY, body text)")
	mustExec(t, ca, "INSERT INTO items VALUES (1, 'one')")
	if n := count(t, ca, "items"); n != 1 {
		t.Errorf("items has %d rows, want 1", n)
	}
	var reg *string
	if err := cb.QueryRow(context.Background(), "SELECT to_regclass('items')::text").Scan(&reg); err != nil {
		t.Fatal(err)
	}
	if reg != nil {
		t.Errorf("table created in %s is visible in %s", na, nb)
	}
	if n := userRelations(t, cb); n != 0 {
		t.Errorf("database %s has %d relations after creating a table in the other one", nb, n)
	}
}

func TestDatabaseDroppedAtCleanup(t *testing.T) {
	var name string
	t.Run("inner", func(t *testing.T) {
		conn := connect(t, Database(t)) // left open: DROP ... WITH (FORCE) must cope
		if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	conn := connect(t, Database(t))
	var exists bool
	err := conn.QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after its test ended", name)
	}
}

func TestParallelDatabases(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			conn := connect(t, Database(t))
			mustExec(t, conn, "CREATE TABLE t (v int)")
			mustExec(t, conn, "INSERT INTO t SELECT generate_series(1, $1::int)", i)
			if n := count(t, conn, "t"); n != i {
				t.Errorf("got %d rows, want %d", n, i)
			}
		})
	}
}

func skipIfExternal(t *testing.T) {
	if os.Getenv(EnvURL) != "" {
		t.Skipf("%s is set: the server is not ours to stop", EnvURL)
	}
}

func TestRestartKeepsData(t *testing.T) {
	skipIfExternal(t)
	dbURL := Database(t)
	conn := connect(t, dbURL)
	mustExec(t, conn, "CREATE TABLE items (id int PRIMARY KEY, body text)")
	mustExec(t, conn, "INSERT INTO items SELECT g, 'row ' || g FROM generate_series(1, 1000) g")
	// Committed immediately before the crash-style stop: must survive.
	mustExec(t, conn, "INSERT INTO items VALUES (1001, 'last')")

	Restart(t, 200*time.Millisecond)

	if err := conn.Ping(context.Background()); err == nil {
		t.Error("a connection from before the restart still works")
	}
	conn2 := connect(t, dbURL)
	if n := count(t, conn2, "items"); n != 1001 {
		t.Errorf("after restart items has %d rows, want 1001", n)
	}
	mustExec(t, conn2, "INSERT INTO items VALUES (1002, 'after')")
	// And new databases can still be made.
	if n := userRelations(t, connect(t, Database(t))); n != 0 {
		t.Errorf("database made after restart has %d relations", n)
	}
}

func TestStopStart(t *testing.T) {
	skipIfExternal(t)
	dbURL := Database(t)
	mustExec(t, connect(t, dbURL), "CREATE TABLE kept (v int)")

	Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		conn.Close(ctx)
		t.Fatal("connected while the cluster was stopped")
	}
	Start(t)
	if n := count(t, connect(t, dbURL), "kept"); n != 0 {
		t.Errorf("kept has %d rows", n)
	}
}

func TestStoppedClusterIsRestartedAfterTest(t *testing.T) {
	skipIfExternal(t)
	t.Run("stops and forgets", func(t *testing.T) {
		Database(t)
		Stop(t)
	})
	conn := connect(t, Database(t))
	if err := conn.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestDBName(t *testing.T) {
	n := dbName("TestFoo/Sub-test with spaces and a very long name that goes on")
	if len(n) > 63 {
		t.Errorf("%q is longer than PostgreSQL's 63-byte limit", n)
	}
	if !strings.HasPrefix(n, "pgtest_testfoo_sub_test_with_spaces_a") {
		t.Errorf("dbName = %q", n)
	}
	if dbName("x") == dbName("x") {
		t.Error("dbName is not unique")
	}
}

func TestVersionLess(t *testing.T) {
	if !versionLess("/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/15/bin") ||
		versionLess("/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin") {
		t.Error("versions compare as strings, not numbers")
	}
}
