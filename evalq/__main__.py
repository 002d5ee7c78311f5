from evalq.client.cli import cli_entry

cli_entry()
