from mcpgen.generator.cli import main

main()
