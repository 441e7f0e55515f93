package store

import (
	"bytes"
)

// Job is a unit of background work made durable before it is done: a turn
// waiting to be extracted. The store does not interpret Data; it keeps the
// owner beside it so forgetting an owner also drops their pending work.
type Job struct {
	Seq   uint64
	Owner string
	Data  []byte
}

// A job is stored as its owner, a newline and its data; the data (a turn,
// the user's and the model's words) sealed in an encrypted store, under
// label (labelJob, or labelHeld for a held one: see held.go).
func (t *Tx) encodeJob(label byte, seq uint64, j Job) []byte {
	data := t.seal(label, j.Owner, encodeU64(seq), j.Data)
	v := make([]byte, 0, len(j.Owner)+1+len(data))
	v = append(v, j.Owner...)
	v = append(v, '\n')
	return append(v, data...)
}

// decodeJob reads a job. One whose data does not open (damaged) comes with
// no data, for the engine to discard as unreadable rather than stop at.
func (t *Tx) decodeJob(label byte, seq uint64, v []byte) Job {
	owner, data, _ := bytes.Cut(v, []byte{'\n'})
	data, err := t.open(label, string(owner), encodeU64(seq), data)
	if err != nil {
		data = nil
	}
	return Job{Seq: seq, Owner: string(owner), Data: append([]byte(nil), data...)}
}

// PutJobs makes a batch of jobs durable in one transaction; their Seq is
// assigned here.
func (s *DB) PutJobs(jobs []Job) error {
	return s.Update(func(t *Tx) error { return t.putJobs(t.tx.Bucket(bucketJobs), labelJob, jobs) })
}

// putJobs appends jobs to b, sealed under label.
func (t *Tx) putJobs(b *kvBucket, label byte, jobs []Job) error {
	b.setFill(appendFill)
	for _, j := range jobs {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		if err := b.Put(encodeU64(seq), t.encodeJob(label, seq, j)); err != nil {
			return err
		}
	}
	return nil
}

// Jobs returns up to limit pending jobs, oldest first.
func (s *DB) Jobs(limit int) ([]Job, error) { return s.readJobs(bucketJobs, labelJob, limit) }

// readJobs returns up to limit jobs of the bucket name (none when there is
// no such bucket), oldest first.
func (s *DB) readJobs(name []byte, label byte, limit int) ([]Job, error) {
	var jobs []Job
	err := s.View(func(t *Tx) error {
		b := t.tx.Bucket(name)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(jobs) < limit; k, v = c.Next() {
			jobs = append(jobs, t.decodeJob(label, decodeU64(k), v))
		}
		return nil
	})
	return jobs, err
}

// PendingJobs counts the jobs not yet done.
func (s *DB) PendingJobs() int {
	n := 0
	_ = s.view(func(tx *kvTx) error { n = tx.Bucket(bucketJobs).Stats().KeyN; return nil })
	return n
}

// DeleteJob marks a job done, in the same transaction as its results.
func (t *Tx) DeleteJob(seq uint64) error {
	return t.tx.Bucket(bucketJobs).Delete(encodeU64(seq))
}

// deleteJobsOf drops the owner's pending jobs, and those held in this
// instance's file, and counts them.
func (t *Tx) deleteJobsOf(owner string) (int, error) {
	n, err := deleteJobsIn(t.tx.Bucket(bucketJobs), owner)
	if err != nil {
		return n, err
	}
	held, err := deleteJobsIn(t.tx.Bucket(bucketHeld), owner)
	return n + held, err
}

// deleteJobsIn drops the owner's jobs from b (nil: none) and counts them.
func deleteJobsIn(b *kvBucket, owner string) (int, error) {
	if b == nil {
		return 0, nil
	}
	var doomed [][]byte
	prefix := []byte(owner + "\n")
	err := b.ForEach(func(k, v []byte) error {
		if bytes.HasPrefix(v, prefix) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}

// HasJob reports whether a job is still pending: on a shared database
// another instance may have done it since it was read.
func (t *Tx) HasJob(seq uint64) bool {
	return t.tx.Bucket(bucketJobs).Get(encodeU64(seq)) != nil
}
