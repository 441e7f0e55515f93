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
// the user's and the model's words) sealed in an encrypted store.
func (t *Tx) encodeJob(seq uint64, j Job) []byte {
	data := t.seal(labelJob, j.Owner, encodeU64(seq), j.Data)
	v := make([]byte, 0, len(j.Owner)+1+len(data))
	v = append(v, j.Owner...)
	v = append(v, '\n')
	return append(v, data...)
}

// decodeJob reads a job. One whose data does not open (damaged) comes with
// no data, for the engine to discard as unreadable rather than stop at.
func (t *Tx) decodeJob(seq uint64, v []byte) Job {
	owner, data, _ := bytes.Cut(v, []byte{'\n'})
	data, err := t.open(labelJob, string(owner), encodeU64(seq), data)
	if err != nil {
		data = nil
	}
	return Job{Seq: seq, Owner: string(owner), Data: append([]byte(nil), data...)}
}

// PutJobs makes a batch of jobs durable in one transaction; their Seq is
// assigned here.
func (s *DB) PutJobs(jobs []Job) error {
	return s.Update(func(t *Tx) error {
		b := t.tx.Bucket(bucketJobs)
		b.setFill(appendFill)
		for _, j := range jobs {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(encodeU64(seq), t.encodeJob(seq, j)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Jobs returns up to limit pending jobs, oldest first.
func (s *DB) Jobs(limit int) ([]Job, error) {
	var jobs []Job
	err := s.View(func(t *Tx) error {
		c := t.tx.Bucket(bucketJobs).Cursor()
		for k, v := c.First(); k != nil && len(jobs) < limit; k, v = c.Next() {
			jobs = append(jobs, t.decodeJob(decodeU64(k), v))
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

// deleteJobsOf drops the owner's pending jobs and counts them.
func (t *Tx) deleteJobsOf(owner string) (int, error) {
	var doomed [][]byte
	prefix := []byte(owner + "\n")
	err := t.tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		if bytes.HasPrefix(v, prefix) {
			doomed = append(doomed, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range doomed {
		if err := t.tx.Bucket(bucketJobs).Delete(k); err != nil {
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
