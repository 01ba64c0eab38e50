"""The mock model server's parts (project/mock_model.py is the program): the real API's request validation
(`requests`), the script mode's file (`script`) and the server's own log of what it received (`evidence`).
None of them imports the notes assistant: the mock judges the client, it does not share its code.
"""
