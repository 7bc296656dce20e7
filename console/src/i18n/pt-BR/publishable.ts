import type { WordsOf } from '../../ui/i18n.js'
import type { publishable as en } from '../en/publishable.js'

export const publishable: WordsOf<typeof en> = {
  'pk.title': 'Chave publicável {name}',
  'pk.help':
    'Uma chave publicável permite que uma página web sua cadastre usuários direto do navegador, atrás de uma prova de trabalho. Ela é pública: vai na página e não serve para nada além do cadastro.',
  'pk.copyName': 'Copiar {name}',
  'pk.rolesHelp':
    'Todo usuário que se cadastra com a chave recebe esses papéis, nunca mais. São oferecidos os papéis que você pode dar: nenhum com permissão de administração (usuários, papéis, tenants, chaves), nenhum acima do seu próprio nível.',
  'pk.originCount': 'Informe de 1 a {max} origens permitidas ({count} informadas).',
  'pk.edit': 'Editar a chave',
  'pk.new': 'Nova chave publicável',
  'pk.originsHelp':
    'As origens exatas das páginas que cadastram usuários, uma por linha ou separadas por vírgula, de 1 a {max}: https://www.example.com, ou http:// em um host de loopback (http://localhost:8080).',
  'pk.perHourHelp':
    'No máximo esta quantidade de cadastros por hora com esta chave (1 a {max}), além de {perAddress} por hora de um mesmo endereço.',
  'snippet.help':
    'Cole-o em uma página servida de uma das origens permitidas da chave, com uma cópia do script do widget ALTCHA ao lado (o comentário no topo explica como). Os visitantes então se cadastram com uma prova de trabalho, direto do navegador, e recebem os papéis padrão da chave.',
  'pk.origins': 'Origens permitidas',
  'pk.perHour': 'Cadastros por hora',
  'pk.warning': 'Os cadastros com esta chave param na hora.',
  'pk.revoked': 'Revogada em',
  'pk.list': 'Chaves publicáveis',
  'pk.create': 'Criar chave publicável',
  'pk.what': 'as chaves publicáveis',
  'pk.none': 'Nenhuma chave publicável ainda.',
  'pk.region': 'Chaves publicáveis, com rolagem',
  'pk.rolesNeedRead': 'Listar os papéis exige roles:read; só os da própria chave são mostrados.',
  'snippet.title': 'Trecho de cadastro',
  'snippet.region': 'HTML do trecho de cadastro',
  'snippet.copy': 'Copiar o trecho',
  'pk.revokeHelp':
    'Os cadastros com a chave são recusados na hora; as páginas que a usam param de funcionar.',
}
