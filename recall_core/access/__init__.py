"""Who a caller is and what it may do: the principal a credential proves (namespace, optional
agent, scopes) and the rules that follow from it (which scopes a tool needs, which
partitions of a namespace an agent sees). Identity always comes from the credential, never
from a tool argument."""
