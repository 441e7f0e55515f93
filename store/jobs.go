package store

import (
	bolt "go.etcd.io/bbolt"
)

// Job is a unit of background work made durable before it is done: a turn
// waiting to be extracted. The store does not interpret Data.
type Job struct {
	Seq  uint64
	Data []byte
}

// PutJobs makes a batch of jobs durable in one transaction.
func (s *DB) PutJobs(data [][]byte) error {
	return s.bolt.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJobs)
		for _, d := range data {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(encodeU64(seq), d); err != nil {
				return err
			}
		}
		return nil
	})
}

// Jobs returns up to limit pending jobs, oldest first.
func (s *DB) Jobs(limit int) ([]Job, error) {
	var jobs []Job
	err := s.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJobs).Cursor()
		for k, v := c.First(); k != nil && len(jobs) < limit; k, v = c.Next() {
			jobs = append(jobs, Job{Seq: decodeU64(k), Data: append([]byte(nil), v...)})
		}
		return nil
	})
	return jobs, err
}

// PendingJobs counts the jobs not yet done.
func (s *DB) PendingJobs() int {
	n := 0
	_ = s.bolt.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketJobs).Stats().KeyN; return nil })
	return n
}

// DeleteJob marks a job done, in the same transaction as its results.
func (t *Tx) DeleteJob(seq uint64) error {
	return t.tx.Bucket(bucketJobs).Delete(encodeU64(seq))
}
