from clinaudit.cli import run

run()
