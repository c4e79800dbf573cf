// A small capability module shared by the examples. Examples import only 'warrant'.
import { createCapability, type CapabilityModule } from 'warrant';

interface User {
  id: string;
  email: string;
  name: string;
}

const users: Record<string, User> = {
  ada: { id: 'ada', email: 'ada@example.com', name: 'Ada Lovelace' },
  alan: { id: 'alan', email: 'alan@example.com', name: 'Alan Turing' },
};

export const directoryModule: CapabilityModule = {
  manifest: {
    name: 'example-directory',
    version: '1.0.0',
    capabilities: ['user.lookup', 'mail.send'],
  },
  capabilities: [
    createCapability<{ id: string }, User>({
      name: 'user.lookup',
      version: '1.0.0',
      description: 'Finds a user of the directory by id',
      risk: 'read',
      lifecycleLogging: false,
      inputSchema: { id: { type: 'string', required: true, description: 'User id' } },
      execute: ({ input }) => {
        const user = users[input.id];
        if (user === undefined) throw new Error(`No user ${JSON.stringify(input.id)}`);
        return user;
      },
    }),
    createCapability<{ to: string; subject: string }, { queued: boolean; to: string }>({
      name: 'mail.send',
      version: '2.1.0',
      description: 'Sends an e-mail message',
      risk: 'write',
      lifecycleLogging: false,
      inputSchema: {
        to: { type: 'string', required: true, description: 'Recipient address' },
        subject: { type: 'string', required: true, description: 'Subject line' },
      },
      execute: ({ input }) => ({ queued: true, to: input.to }),
    }),
  ],
};
