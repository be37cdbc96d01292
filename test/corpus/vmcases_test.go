package corpus_test

// vmCaseFiles lists the corpus files that need bonding, 802.1Q or dummy
// links, which run in the VM (corpus_vm_test.go).
func vmCaseFiles() []string {
	return nil
}
